// Liveness and readiness (GET /livez, GET /readyz), served on the HTTPS listener and on the
// METRICS_ADDR one. Live: the process answers. Ready: the database answers and no graceful stop
// has begun, so a load balancer takes the instance out before it goes away or while it cannot serve.
import { AppError } from "../http/errors.ts";
import { within } from "./within.ts";

/** A ping slower than this counts as a database that does not answer. */
export const PING_TIMEOUT_MS = 2000;

export class Probes {
  private draining = false;

  constructor(private readonly ping: () => Promise<unknown>) {}

  /** A graceful stop has begun: from now on the instance is not ready. */
  drain(): void {
    this.draining = true;
  }

  /** Resolves when the instance is ready; otherwise rejects with 503 unavailable and why. */
  async ready(): Promise<void> {
    if (this.draining) throw unavailable("The service is stopping.");
    const answered = await within(this.ping().then(() => true), PING_TIMEOUT_MS);
    if (!answered) throw unavailable("The database does not answer.");
  }
}

function unavailable(message: string): AppError {
  return new AppError("unavailable", message, { headers: { "retry-after": "2" }, fields: { retry_after: 2 } });
}
