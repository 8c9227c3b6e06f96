/**
 * `$(VAR)` expansion as upstream does it (third_party/forked/golang/expansion), for container
 * env values, command, args and a volumeMount's subPathExpr:
 *
 *  - `$(VAR)` expands to what the mapping gives; an unknown `$(VAR)` stays as written;
 *  - `$$` is a literal `$`; a lone `$` or an unclosed `$(` stays as written.
 */

/** Expands $(VAR) references in input with mapping; see the file comment for the rules. */
export function expand(input: string, mapping: (name: string) => string): string {
  let out = '';
  let checkpoint = 0;
  for (let cursor = 0; cursor < input.length; cursor++) {
    if (input[cursor] !== '$' || cursor + 1 >= input.length) continue;
    out += input.slice(checkpoint, cursor);
    const { read, isVar, advance } = tryReadVariableName(input.slice(cursor + 1));
    out += isVar ? mapping(read) : read;
    cursor += advance;
    checkpoint = cursor + 1;
  }
  return out + input.slice(checkpoint);
}

function tryReadVariableName(input: string): { read: string; isVar: boolean; advance: number } {
  if (input[0] === '$') return { read: '$', isVar: false, advance: 1 };
  if (input[0] === '(') {
    const close = input.indexOf(')', 1);
    if (close >= 0) return { read: input.slice(1, close), isVar: true, advance: close + 1 };
    return { read: '$(', isVar: false, advance: 1 };
  }
  return { read: `$${input[0]}`, isVar: false, advance: 1 };
}

/** A mapping that resolves from the first map that has the name, else leaves `$(name)`. */
export function mappingFor(...contexts: ReadonlyMap<string, string>[]): (name: string) => string {
  return (name) => {
    for (const vars of contexts) {
      const v = vars.get(name);
      if (v !== undefined) return v;
    }
    return `$(${name})`;
  };
}
