/**
 * A value already serialized as JSON, written to a response as it is. Execution results travel as text
 * from the worker to the caller (the API never parses them back), and fixed documents are serialized
 * once at start.
 */
export class JsonText {
  constructor(readonly text: string) {}

  static of(value: unknown): JsonText {
    return new JsonText(JSON.stringify(value));
  }

  /** A JSON array of the given values, without parsing them. */
  static array(items: readonly JsonText[]): JsonText {
    return new JsonText(`[${items.map((item) => item.text).join(",")}]`);
  }
}
