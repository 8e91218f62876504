/**
 * deploy/kubernetes/*.yaml validated offline against the Kubernetes API's schemas, as the npm package
 * kubernetes-models ships them (generated from the API's OpenAPI document): wrong types and missing
 * required fields fail. It does not flag unknown keys, and nothing here schedules a pod; see docs/deploy.md.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { REPO_ROOT } from "../../helpers/proxy-harness.js";

interface Model {
  validate(): void;
}
type ModelClass = new (data: Record<string, unknown>) => Model;

/** The model of each kind the manifests use, from the package's own module for it. */
async function modelFor(apiVersion: string, kind: string): Promise<ModelClass> {
  const group = apiVersion.includes("/") ? apiVersion : `v1`;
  const module = `kubernetes-models/${group}/${kind}`;
  try {
    const loaded = (await import(/* @vite-ignore */ module)) as Record<string, ModelClass>;
    const model = loaded[kind];
    if (!model) throw new Error(`${module} has no export ${kind}`);
    return model;
  } catch (err) {
    throw new Error(`no Kubernetes model for ${apiVersion} ${kind} (${module}): is the devDependency kubernetes-models installed? ${(err as Error).message}`);
  }
}

async function validate(manifest: Record<string, unknown>): Promise<void> {
  const Model = await modelFor(String(manifest.apiVersion), String(manifest.kind));
  new Model(manifest).validate();
}

const DIR = path.join(REPO_ROOT, "deploy", "kubernetes");
const manifests = readdirSync(DIR)
  .filter((f) => f.endsWith(".yaml"))
  .flatMap((file) =>
    parseAllDocuments(readFileSync(path.join(DIR, file), "utf8")).map((doc, i) => {
      if (doc.errors.length > 0) throw new Error(`${file} document ${i}: ${doc.errors[0]!.message}`);
      return { file, manifest: doc.toJS() as Record<string, unknown> };
    }),
  );

describe("deploy/kubernetes manifests against the Kubernetes schemas", () => {
  it("finds the Deployment, its Service, Redis and the CA Secret", () => {
    expect(manifests.map(({ file, manifest }) => `${file}: ${String(manifest.apiVersion)} ${String(manifest.kind)}`).sort()).toEqual([
      "ca-secret.yaml: v1 Secret",
      "deployment.yaml: apps/v1 Deployment",
      "redis.yaml: apps/v1 Deployment",
      "redis.yaml: v1 Service",
      "service.yaml: v1 Service",
    ]);
  });

  it.each(manifests.map(({ file, manifest }) => [`${file} ${String(manifest.kind)} ${String((manifest.metadata as { name?: string }).name)}`, manifest] as const))(
    "%s is valid",
    async (_name, manifest) => {
      await expect(validate(manifest)).resolves.toBeUndefined();
    },
  );

  it("would catch a wrong type or a missing required field in them", async () => {
    const deployment = structuredClone(manifests.find((m) => m.file === "deployment.yaml")!.manifest) as {
      spec: { replicas: unknown; template: { spec: { containers: { name?: string; ports: { containerPort: unknown }[] }[] } } };
    };
    deployment.spec.replicas = "2";
    await expect(validate(deployment as unknown as Record<string, unknown>)).rejects.toThrow(/spec\/replicas must be integer/);
    deployment.spec.replicas = 2;
    delete deployment.spec.template.spec.containers[0]!.name;
    await expect(validate(deployment as unknown as Record<string, unknown>)).rejects.toThrow(/containers\/0 must have required property name/);
    const service = structuredClone(manifests.find((m) => m.file === "service.yaml")!.manifest) as { spec: { ports: { port?: unknown }[] } };
    delete service.spec.ports[0]!.port;
    await expect(validate(service as unknown as Record<string, unknown>)).rejects.toThrow(/ports\/0 must have required property port/);
  });
});
