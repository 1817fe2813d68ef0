import type { Clock } from "./clock.ts";
import type { Config } from "./config.ts";
import type { Mailer } from "./mail.ts";
import type { Connector, Resolver, TlsConnector } from "./net.ts";

/** Everything the app needs from outside; main.ts wires real parts, tests their own. */
export interface Deps {
  kv: Deno.Kv;
  clock: Clock;
  mailer: Mailer;
  resolver: Resolver;
  connector: Connector;
  /** TLS towards checked addresses; absent: refused (kv/checks never open TLS alone). */
  tls?: TlsConnector;
  config: Config;
  /**
   * Standard output, for what is printed (a mail to an unset team mailbox, kv/forms/inbox.ts):
   * main.ts passes console.log; tests keep the lines, so a green run prints none of them.
   */
  print: (text: string) => void;
}
