// An independent check of warden's C2SP tiles: Go's golang.org/x/mod/sumdb/tlog reads the tiles a
// test saved under DIR (tile/<L>/<N>[.p/<W>], as c2sp.org/tlog-tiles spells them), checks each
// against the tree head, rebuilds the root, proves a record's inclusion and the tree's consistency
// with an older head from them, and checks warden's own inclusion and consistency paths.
//
// Usage: go run verify-tiles.go < request.json, where request.json is
// {"dir", "size", "root", "index", "record", "path", "old_size", "old_root", "consistency"}
// (hashes as hex without 0x; record: the receipt's chain hash). Prints "ok" and exits 0, or prints
// what failed and exits 1.
package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/mod/sumdb/tlog"
)

type request struct {
	Dir         string   `json:"dir"`
	Size        int64    `json:"size"`
	Root        string   `json:"root"`
	Index       int64    `json:"index"`
	Record      string   `json:"record"`
	Path        []string `json:"path"`
	OldSize     int64    `json:"old_size"`
	OldRoot     string   `json:"old_root"`
	Consistency []string `json:"consistency"`
}

// tiles reads tiles from the directory; tlog's paths carry the height (tile/8/L/N), C2SP's do not.
type tiles struct{ dir string }

func (t tiles) Height() int { return 8 }

func (t tiles) ReadTiles(list []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(list))
	for i, tile := range list {
		path := strings.Replace(tile.Path(), "tile/8/", "tile/", 1)
		data, err := os.ReadFile(filepath.Join(t.dir, path))
		if err != nil {
			return nil, err
		}
		out[i] = data
	}
	return out, nil
}

func (t tiles) SaveTiles([]tlog.Tile, [][]byte) {}

func hash(s string) tlog.Hash {
	var h tlog.Hash
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(h) {
		fail("bad hash %q", s)
	}
	copy(h[:], b)
	return h
}

func hashes(list []string) []tlog.Hash {
	out := make([]tlog.Hash, len(list))
	for i, s := range list {
		out[i] = hash(s)
	}
	return out
}

func fail(format string, args ...any) {
	fmt.Printf(format+"\n", args...)
	os.Exit(1)
}

func main() {
	var req request
	if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
		fail("request: %v", err)
	}
	root := hash(req.Root)
	reader := tlog.TileHashReader(tlog.Tree{N: req.Size, Hash: root}, tiles{req.Dir})

	got, err := tlog.TreeHash(req.Size, reader)
	if err != nil || got != root {
		fail("tree hash from the tiles: %v %v", got, err)
	}
	record, err := hex.DecodeString(req.Record)
	if err != nil {
		fail("record: %v", err)
	}
	leaf := tlog.RecordHash(record)
	proof, err := tlog.ProveRecord(req.Size, req.Index, reader)
	if err != nil {
		fail("prove record: %v", err)
	}
	if err := tlog.CheckRecord(proof, req.Size, root, req.Index, leaf); err != nil {
		fail("check record (proof from the tiles): %v", err)
	}
	if err := tlog.CheckRecord(tlog.RecordProof(hashes(req.Path)), req.Size, root, req.Index, leaf); err != nil {
		fail("check record (warden's inclusion path): %v", err)
	}
	oldRoot := hash(req.OldRoot)
	treeProof, err := tlog.ProveTree(req.Size, req.OldSize, reader)
	if err != nil {
		fail("prove tree: %v", err)
	}
	if err := tlog.CheckTree(treeProof, req.Size, root, req.OldSize, oldRoot); err != nil {
		fail("check tree (proof from the tiles): %v", err)
	}
	if err := tlog.CheckTree(tlog.TreeProof(hashes(req.Consistency)), req.Size, root, req.OldSize, oldRoot); err != nil {
		fail("check tree (warden's consistency path): %v", err)
	}
	fmt.Println("ok")
}
