export default async function* fileTimes(source) {
  const byFile = new Map();
  for await (const ev of source) {
    if ((ev.type === 'test:pass' || ev.type === 'test:fail') && ev.data.nesting === 0 && ev.data.file) {
      byFile.set(ev.data.file, (byFile.get(ev.data.file) ?? 0) + (ev.data.details?.duration_ms ?? 0));
    }
  }
  for (const [f, ms] of [...byFile].sort((a, b) => b[1] - a[1])) yield `${(ms / 1000).toFixed(1).padStart(7)} s  ${f}\n`;
}
