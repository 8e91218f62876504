// An OTLP/HTTP receiver standing in for the OpenTelemetry Collector in `npm run test:deploy`: it accepts
// POST /v1/traces, /v1/metrics and /v1/logs (protobuf or JSON), answers an empty success as a Collector
// does, and prints one JSON line per export. It does not decode the payload: it notes whether the bytes
// carry the exporting service's name, which both encodings hold as a plain string. Arguments (the
// Collector's `--config FILE`) are accepted and ignored.
import http from "node:http";

const MAX_BODY = 16 * 1024 * 1024;
const SIGNALS = { "/v1/traces": "traces", "/v1/metrics": "metrics", "/v1/logs": "logs" };
const serviceName = process.env.SINK_SERVICE_NAME ?? "mcp-wiretap";

const server = http.createServer((req, res) => {
  const signal = SIGNALS[req.url ?? ""];
  if (req.method !== "POST" || !signal) {
    res.writeHead(404).end();
    return;
  }
  const chunks = [];
  let size = 0;
  req.on("data", (chunk) => {
    size += chunk.length;
    if (size > MAX_BODY) req.destroy();
    else chunks.push(chunk);
  });
  req.on("end", () => {
    const body = Buffer.concat(chunks);
    const type = req.headers["content-type"] ?? "";
    const line = { signal, content_type: type, bytes: body.length, service_seen: body.includes(serviceName) };
    process.stdout.write(`${JSON.stringify(line)}\n`);
    const json = type.includes("json");
    res.writeHead(200, { "content-type": json ? "application/json" : "application/x-protobuf" }).end(json ? "{}" : "");
  });
});
server.listen(4318, "0.0.0.0", () => process.stdout.write(`otlp-sink listening on :4318\n`));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
