/**
 * Tracing and telemetry exporters that reach the network on their own, switched on by the
 * environment the executor inherits (the simulator passes its own environment through): a
 * strict-mode refusal of a real socket to one of their addresses names the exporter and the
 * variable that turns it off (docs/your-executor.md, "The executor's environment").
 */

interface Culprit {
  name: string;
  /** Host name suffixes its exporter sends to. */
  hosts: string[];
  /** Ports its exporter sends to by default (on any host). */
  ports: number[];
  switch: string;
}

const CULPRITS: Culprit[] = [
  {
    name: "LangSmith tracing (LangChain.js, LangGraph.js)",
    hosts: ["smith.langchain.com"],
    ports: [],
    switch: "set LANGSMITH_TRACING=false and LANGCHAIN_TRACING_V2=false, or unset them",
  },
  {
    name: "OpenTelemetry SDK (an OTLP exporter)",
    hosts: [],
    ports: [4317, 4318],
    switch: "set OTEL_SDK_DISABLED=true",
  },
  { name: "Sentry", hosts: ["sentry.io"], ports: [], switch: "unset SENTRY_DSN" },
  { name: "PostHog usage telemetry", hosts: ["posthog.com"], ports: [], switch: "the embedding library's opt-out (ANONYMIZED_TELEMETRY=false for some)" },
];

/** `"; this looks like <culprit>...: <switch>"` for a known exporter's address, else `""`. */
export function addressAdvice(host: unknown, port: unknown): string {
  const name = typeof host === "string" ? host.toLowerCase().replace(/\.$/, "") : "";
  const p = typeof port === "string" ? Number(port) : port;
  for (const c of CULPRITS) {
    if (c.hosts.some((h) => name === h || name.endsWith(`.${h}`)) || (typeof p === "number" && c.ports.includes(p))) {
      return `; this looks like ${c.name}, switched on by the environment the executor inherits: ${c.switch}`;
    }
  }
  return "";
}

/** The host and port of `net.Socket.connect`'s arguments (options object, or port then host). */
export function connectAddress(args: unknown[]): [unknown, unknown] {
  const first = args[0];
  if (first !== null && typeof first === "object" && !Array.isArray(first)) {
    const o = first as { host?: unknown; port?: unknown };
    return [o.host ?? "localhost", o.port];
  }
  if (Array.isArray(first)) return connectAddress(first as unknown[]);
  return [typeof args[1] === "string" ? args[1] : "localhost", first];
}
