import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { createServer } from "@modelcontextprotocol/server-everything/dist/server/index.js";

export interface EverythingListings {
  instructions: string | undefined;
  tools: unknown;
  prompts: unknown;
  resources: unknown;
  resourceTemplates: unknown;
  /** A `tools/call` result that carries a base64 PNG. */
  tinyImage: unknown;
}

/**
 * The listings the MCP reference server sends to a client that declares every capability (so the
 * conditional tools are listed too): real, ordinary descriptions for the false-positive corpora.
 */
export async function everythingListings(): Promise<EverythingListings> {
  const { server, cleanup } = createServer();
  const client = new Client(
    { name: "detector-corpus", version: "0.0.0" },
    {
      capabilities: {
        roots: {},
        sampling: {},
        elicitation: { form: {}, url: {} },
        tasks: { requests: { sampling: { createMessage: {} }, elicitation: { create: {} } } },
      },
    },
  );
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  try {
    await server.connect(serverSide);
    await client.connect(clientSide);
    return {
      instructions: client.getInstructions(),
      tools: await client.listTools(),
      prompts: await client.listPrompts(),
      resources: await client.listResources(),
      resourceTemplates: await client.listResourceTemplates(),
      tinyImage: await client.callTool({ name: "get-tiny-image", arguments: {} }),
    };
  } finally {
    cleanup();
    await client.close();
    await server.close();
  }
}
