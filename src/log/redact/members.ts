export { isPlainObject } from "../../util/plain-object.js";

/**
 * Sets an own member of a plain object, "__proto__" included (plain assignment of that one would change
 * the prototype instead). Every other name is assigned plainly: defining them all would turn each copy
 * into a slow dictionary-mode object.
 */
export function defineMember(target: object, name: string, value: unknown): void {
  if (name === "__proto__") Object.defineProperty(target, name, { value, enumerable: true, writable: true, configurable: true });
  else (target as Record<string, unknown>)[name] = value;
}
