/**
 * Reads JSON with comments and trailing commas (VS Code's `mcp.json`, and what people leave in the others)
 * with jsonc-parser into a tree that knows where every value and key sits in the text, so an edit can replace
 * exactly one value and leave every other byte (comments, layout, key order) as it was.
 */
import { type Node, type ParseError, parseTree, printParseErrorCode } from "jsonc-parser";

export type JsonNode =
  | { kind: "object"; start: number; end: number; props: JsonProp[] }
  | { kind: "array"; start: number; end: number; items: JsonNode[] }
  | { kind: "string"; start: number; end: number; value: string }
  | { kind: "scalar"; start: number; end: number; value: number | boolean | null };

export interface JsonProp {
  key: string;
  keyStart: number;
  value: JsonNode;
}

export class JsoncError extends Error {}

const MAX_DEPTH = 256;

export function parseJsonc(text: string): JsonNode {
  const errors: ParseError[] = [];
  let tree: Node | undefined;
  try {
    // A byte-order mark (some Windows editors write one) read as a space: every offset stays where it was.
    tree = parseTree(text.replace(/^\uFEFF/, " "), errors, { allowTrailingComma: true, disallowComments: false });
  } catch (err) {
    // The parser recurses once per level: a document nested past the stack is not a config.
    if (err instanceof RangeError) throw new JsoncError("nested too deeply");
    throw err;
  }
  const first = errors[0];
  if (first) throw new JsoncError(`line ${lineAt(text, first.offset)}: ${describeError(printParseErrorCode(first.error))}`);
  if (!tree) throw new JsoncError("line 1: the document is empty");
  return toJsonNode(tree, text, 0);
}

function lineAt(text: string, offset: number): number {
  return text.slice(0, offset).split("\n").length;
}

/** jsonc-parser's error names, as words. */
function describeError(code: string): string {
  return code.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase();
}

function toJsonNode(node: Node, text: string, depth: number): JsonNode {
  if (depth > MAX_DEPTH) throw new JsoncError(`line ${lineAt(text, node.offset)}: nested too deeply`);
  const start = node.offset;
  const end = node.offset + node.length;
  switch (node.type) {
    case "object":
      return {
        kind: "object",
        start,
        end,
        props: (node.children ?? []).map((prop) => {
          const [key, value] = prop.children ?? [];
          if (!key || !value) throw new JsoncError(`line ${lineAt(text, prop.offset)}: a property without a value`);
          return { key: key.value as string, keyStart: key.offset, value: toJsonNode(value, text, depth + 1) };
        }),
      };
    case "array":
      return { kind: "array", start, end, items: (node.children ?? []).map((item) => toJsonNode(item, text, depth + 1)) };
    case "string":
      return { kind: "string", start, end, value: node.value as string };
    default:
      return { kind: "scalar", start, end, value: node.value as number | boolean | null };
  }
}

/** The plain value of a node, as JSON.parse would give it (the last of duplicate keys wins, as there). */
export function plainValue(node: JsonNode): unknown {
  switch (node.kind) {
    case "object": {
      const out: Record<string, unknown> = {};
      for (const prop of node.props) Object.defineProperty(out, prop.key, { value: plainValue(prop.value), enumerable: true, writable: true, configurable: true });
      return out;
    }
    case "array":
      return node.items.map(plainValue);
    default:
      return node.value;
  }
}

/** The property of an object node by key, or undefined; "duplicate" when the key appears more than once. */
export function propOf(node: JsonNode, key: string): JsonProp | "duplicate" | undefined {
  if (node.kind !== "object") return undefined;
  const found = node.props.filter((prop) => prop.key === key);
  if (found.length > 1) return "duplicate";
  return found[0];
}
