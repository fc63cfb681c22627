// The gateway scenario of the AuthZEN interop runners: its users as entities and a policy that
// names none of them (../authzen-setup.ts). From the repository root:
//
//   WARDEN_URL=https://127.0.0.1:8443 WARDEN_TOKEN=... WARDEN_INSECURE=1 bun examples/authzen-gateway/setup.ts
import { setup } from "../authzen-setup.ts";

await setup(import.meta.dir);
