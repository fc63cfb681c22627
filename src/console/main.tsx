// The console's entry point (loaded by index.html as a module; no inline script anywhere).
import { render } from "preact";
import { App } from "./app/app.tsx";

render(<App />, document.getElementById("app")!);
