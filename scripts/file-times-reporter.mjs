// A node:test reporter: the time each test file took (the sum of its top-level tests), slowest
// first. scripts/test.sh prints the head of it after each leg, so the 45-minute budget of the
// suite can be spent knowingly (which file costs what on which leg).
export default async function* fileTimes(source) {
  const byFile = new Map();
  for await (const ev of source) {
    const top = (ev.type === 'test:pass' || ev.type === 'test:fail') && ev.data.nesting === 0;
    if (top && ev.data.file) {
      const ms = ev.data.details?.duration_ms ?? 0;
      byFile.set(ev.data.file, (byFile.get(ev.data.file) ?? 0) + ms);
    }
  }
  const rows = [...byFile].sort((a, b) => b[1] - a[1]);
  for (const [file, ms] of rows) yield `${(ms / 1000).toFixed(1).padStart(7)} s  ${file.replace(/^.*\/dist\//, '')}\n`;
}
