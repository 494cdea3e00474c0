import { run } from "../../dist/index.js";
await run();
