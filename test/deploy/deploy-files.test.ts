/**
 * deploy/ cannot be run here as shipped (no container engine), so what it says about mcp-wiretap is checked
 * against the real CLI: every option the Compose file and the Kubernetes Deployment pass exists, the probes
 * and the balancer's health check ask the proxy's /healthz on the port it listens on, the CA reaches every
 * replica read-only, and the Deployment's init container, run as written, gives the proxy a CA folder it
 * accepts (a Secret volume's files are links with group bits, which the proxy refuses for a key).
 */
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { startCliProxy } from "../helpers/cli-proxy.js";
import { REPO_ROOT, runCli } from "../helpers/proxy-harness.js";

const DEPLOY = path.join(REPO_ROOT, "deploy");
const read = (file: string): string => readFileSync(path.join(DEPLOY, file), "utf8");
type Doc = Record<string, any>;

const compose = parse(read("docker-compose.yml"), { merge: true }) as Doc;
const deployment = parse(read("kubernetes/deployment.yaml")) as Doc;
const service = parse(read("kubernetes/service.yaml")) as Doc;
const haproxy = read("haproxy.cfg");

let startHelp = "";
async function startOptions(): Promise<Set<string>> {
  startHelp ||= (await runCli(["start", "--help"])).stdout;
  return new Set([...startHelp.matchAll(/(?:^|\s)(--[a-z][a-z-]*)/g)].map((m) => m[1]!));
}
const optionsOf = (args: string[]): string[] => args.filter((a) => a.startsWith("--"));

describe("deploy/docker-compose.yml", () => {
  const replicas = ["wiretap-a", "wiretap-b"].map((name) => ({ name, service: compose.services[name] as Doc }));

  it("runs two replicas of `mcp-wiretap start` with options the CLI has, the CA mounted read-only in each", async () => {
    const known = await startOptions();
    for (const { name, service: s } of replicas) {
      expect(s, name).toBeDefined();
      expect(s.command[0], name).toBe("start");
      for (const option of optionsOf(s.command)) expect(known, `${name}: ${option}`).toContain(option);
      expect(s.volumes.filter((v: string) => v.endsWith(":/app/certs:ro")), name).toHaveLength(1);
      expect(s.command.join(" "), name).toContain("--ca-dir /app/certs");
      // Listening beyond loopback needs proxy credentials, and the replicas share Redis.
      expect(Object.keys(s.environment).sort(), name).toEqual(expect.arrayContaining(["MCP_WIRETAP_PROXY_AUTH", "MCP_WIRETAP_STATE_URL", "OTEL_EXPORTER_OTLP_ENDPOINT"]));
    }
  });

  it("balances over exactly those replicas, on the port they listen on, checking /healthz", () => {
    const servers = [...haproxy.matchAll(/^\s*server \w+ ([\w-]+):(\d+) check/gm)].map((m) => `${m[1]}:${m[2]}`);
    expect(servers).toEqual(["wiretap-a:8080", "wiretap-b:8080"]);
    expect(haproxy).toMatch(/http-check send meth GET uri \/healthz ver HTTP\/1\.1 hdr Host localhost/);
    expect(compose.services.balancer.volumes).toContain("./haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro");
  });
});

describe("deploy/kubernetes", () => {
  const pod = deployment.spec.template.spec as Doc;
  const container = (pod.containers as Doc[]).find((c) => c.name === "mcp-wiretap")!;
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it("the Deployment passes options the CLI has; readiness and liveness ask /healthz on the proxy's port; the Service targets it, keeping each client on one pod", async () => {
    const known = await startOptions();
    for (const option of optionsOf(container.args)) expect(known, option).toContain(option);
    const port = (container.ports as Doc[]).find((p) => p.name === "proxy");
    expect(port?.containerPort).toBe(8080);
    for (const probe of [container.readinessProbe, container.livenessProbe]) expect(probe.httpGet).toEqual({ path: "/healthz", port: "proxy" });
    expect(service.spec.ports[0]).toMatchObject({ port: 8080, targetPort: "proxy" });
    expect(service.spec.selector).toEqual(deployment.spec.selector.matchLabels);
    // One client's tunnels on one replica, as deploy/haproxy.cfg does (test/deploy/cross-replica-pairing.test.ts).
    expect(service.spec.sessionAffinity).toBe("ClientIP");
  });

  it("the CA Secret is mounted read-only, and the init container's copy is a CA folder the proxy starts with", async () => {
    const init = (pod.initContainers as Doc[])[0]!;
    const secretMount = (init.volumeMounts as Doc[]).find((m) => m.name === "ca-secret");
    expect(secretMount).toMatchObject({ mountPath: "/secret", readOnly: true });
    expect((pod.volumes as Doc[]).find((v) => v.name === "ca-secret")?.secret).toMatchObject({ secretName: "mcp-wiretap-ca" });

    // A CA made by the CLI, laid out as kubelet mounts a Secret: files are links into a hidden folder, 0440.
    const dir = mkdtempSync(path.join(os.tmpdir(), "mcp-wiretap-k8s-"));
    dirs.push(dir);
    const made = path.join(dir, "made");
    await runCli(["ca", "path", "--ca-dir", made]);
    const secret = path.join(dir, "secret");
    mkdirSync(path.join(secret, "..data"), { recursive: true });
    for (const file of ["ca.pem", "ca-key.pem"]) {
      writeFileSync(path.join(secret, "..data", file), readFileSync(path.join(made, file)));
      chmodSync(path.join(secret, "..data", file), 0o440);
      symlinkSync(path.join("..data", file), path.join(secret, file));
    }
    const caVolume = path.join(dir, "ca");
    mkdirSync(caVolume);
    // The init container's script as written, with the two mount points moved into the temp folder.
    const script = (init.command as string[]).at(-1)!;
    expect(script).toContain("/secret/");
    const local = script.replaceAll("/secret/", `${secret}/`).replaceAll("/ca/", `${caVolume}/`);
    execFileSync("sh", ["-c", local]);

    const proxy = await startCliProxy([], { caDir: path.join(caVolume, "certs") });
    try {
      const start = await proxy.waitForRecord((r) => r.event === "start", "the start record");
      expect(start.caCreated).toBe(false);
      expect(proxy.caPem).toBe(readFileSync(path.join(made, "ca.pem"), "utf8"));
    } finally {
      await proxy.dispose();
    }
  });
});
