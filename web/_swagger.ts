/**
 * The API reference's viewer files, from the npm package swagger-ui-dist, registered as static
 * files. A module of its own because swagger-ui-dist is CommonJS: evaluating it starts Deno's
 * Node module layer, whose start-up time and memory only the API reference page and its two
 * files need, never the start of the server (docs/performance.md, "Start-up and the request
 * path").
 */
import absolutePath from "swagger-ui-dist/absolute-path.js";
import { addAsset } from "./_static.ts";

/** The files /static/ serves only once `swaggerAssets` has run. */
const SWAGGER_FILES = ["swagger-ui-bundle.js", "swagger-ui.css"];

/** Registers the viewer's files as static files (called again, it changes nothing). */
export function swaggerAssets(): void {
  for (const name of SWAGGER_FILES) {
    addAsset(name, () => Deno.readFileSync(`${absolutePath() as string}/${name}`));
  }
}
