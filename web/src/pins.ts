// What the reader pins on the verify page, as sapsam audit verify takes it (docs/audit.md §4.2,
// §4.5): verifier keys one a line (`#` comments; a leading word such as `current` or `retired`
// skipped), and player keys as `PLAYER=KEY` (PLAYER an id or players/<id>, KEY 64 hex digits).

/** The vkeys of a text of them, one a line. */
export function parseKeyLines(text: string): string[] {
  return text.split("\n").map((l) => l.replace(/#.*/, "").trim()).filter((l) => l !== "")
    .map((l) => { const words = l.split(/\s+/); return words[words.length - 1]!; });
}

/** `PLAYER=KEY` lines into the pins verifyExport takes; a line that is neither throws, naming it. */
export function parsePlayerKeys(text: string): Record<string, string[]> {
  const pins: Record<string, string[]> = {};
  text.split("\n").forEach((raw, i) => {
    const line = raw.replace(/#.*/, "").trim();
    if (line === "") return;
    const m = /^(?:players\/)?([^=\s]+)\s*=\s*([0-9a-fA-F]{64})$/.exec(line);
    if (m === null) throw new Error(`player key line ${i + 1}: not PLAYER=KEY (64 hex digits)`);
    (pins[m[1]!] ??= []).push(m[2]!.toLowerCase());
  });
  for (const [player, keys] of Object.entries(pins)) if (keys.length > 64) throw new Error(`more than 64 keys pinned for ${player}`);
  return pins;
}

/** What to tell the reader when a verdict is anchored to a server key this page's link filled in
 * (`?key=`) and the reader left it as it came: anyone can make such a link with a key of their
 * own, so the anchor is only as good as the link. Undefined when the reader chose the key. */
export function linkKeyWarning(verdict: string, keyNow: string, keyFromLink: string): string | undefined {
  if (verdict !== "ANCHORED" || keyFromLink.trim() === "" || keyNow.trim() !== keyFromLink.trim()) return undefined;
  return "the server key was filled in by this page's link, not by you: the verdict is anchored only if that key is the one the server publishes (compare it with `sapsam keys show` or GetServerKey from a source you trust)";
}
