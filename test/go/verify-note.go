// An independent check of warden's C2SP checkpoints: Go's golang.org/x/mod/sumdb/note opens the
// signed note with the verifier key alone. Usage: go run verify-note.go VERIFIER_KEY < note
// Prints the verified note text and exits 0, or prints the error and exits 1.
package main

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/mod/sumdb/note"
)

func main() {
	verifier, err := note.NewVerifier(os.Args[1])
	if err != nil {
		fmt.Println("verifier key:", err)
		os.Exit(1)
	}
	msg, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Println("read:", err)
		os.Exit(1)
	}
	n, err := note.Open(msg, note.VerifierList(verifier))
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(1)
	}
	fmt.Print(n.Text)
}
