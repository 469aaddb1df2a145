/** A table of a store's named replies, name → code: what its scripts and statements answer, and its decoders read. */
export type CodeTable<Name extends string = string> = Readonly<Record<Name, number>>;

/**
 * The decoder of `codes`, each reply being `what` in its error: a code of no reply is a store out of step
 * with the table, an error rather than a reply guessed.
 */
export function codeDecoder<C extends CodeTable>(codes: C, what: string): (code: number) => keyof C & string {
  const byCode = new Map<number, keyof C & string>(Object.entries(codes).map(([name, code]) => [code, name]));
  return (code) => {
    const name = byCode.get(code);
    if (name === undefined) throw new Error(`No ${what} has the code ${code}: ${JSON.stringify(codes)}`);
    return name;
  };
}
