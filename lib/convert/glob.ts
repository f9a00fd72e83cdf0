// Dataset-name filters for --include/--exclude: exact names or globs over '/'-separated paths.

function globToRegExp(glob: string): RegExp {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*') {
      if (glob[i + 1] === '*') {
        // `**/` matches zero or more whole segments; a bare `**` matches anything.
        if (glob[i + 2] === '/') { out += '(?:.*/)?'; i += 2; } else { out += '.*'; i += 1; }
      } else {
        out += '[^/]*';
      }
    } else if (c === '?') {
      out += '[^/]';
    } else {
      out += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
    }
  }
  return new RegExp(`^${out}$`);
}

/** A predicate over dataset names; leading slashes in patterns are ignored. */
export function nameFilter(include?: string[], exclude?: string[]): (name: string) => boolean {
  const compile = (patterns?: string[]) =>
    (patterns ?? []).filter((p) => p.length > 0).map((p) => globToRegExp(p.replace(/^\/+/, '')));
  const inc = compile(include);
  const exc = compile(exclude);
  return (name) => (inc.length === 0 || inc.some((r) => r.test(name))) && !exc.some((r) => r.test(name));
}
