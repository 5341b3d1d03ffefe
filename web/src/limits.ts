// docs/audit.md §2.4: an export beyond these limits is refused unread, not verified.

export class ExportLimitError extends Error {}

const MAX_EXPORT = 268_435_456;
const MAX_LINE = 1_048_576;
const MAX_NESTING = 32;
const MAX_DIGITS = 19;

/**
 * A dropped file's text, read as a stream and refused (ExportLimitError) as soon as it holds more than
 * `max` characters, so a file of gigabytes is never read whole (as `sapsam audit verify` stops reading).
 */
export async function readLimited(file: Blob, max = MAX_EXPORT): Promise<string> {
  const reader = file.stream().pipeThrough(new TextDecoderStream()).getReader();
  const parts: string[] = [];
  let size = 0;
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
    size += chunk.value.length;
    if (size > max) {
      await reader.cancel();
      throw new ExportLimitError(`the file is longer than ${max} characters`);
    }
    parts.push(chunk.value);
  }
  return parts.join("");
}

/** Throws ExportLimitError ("line N: …") for the first limit the text exceeds. */
export function checkLimits(text: string): void {
  if (text.length > MAX_EXPORT) throw new ExportLimitError(`the export is longer than ${MAX_EXPORT} characters`);
  text.split(/\r?\n/).forEach((line, i) => {
    const where = `line ${i + 1}`;
    if (line.length > MAX_LINE) throw new ExportLimitError(`${where}: longer than ${MAX_LINE} characters`);
    // Brackets and digits inside strings do not count.
    const outside = line.replace(/"(?:[^"\\]|\\.)*"/g, '""');
    let depth = 0;
    for (const ch of outside) {
      if (ch === "[" || ch === "{") depth++;
      else if (ch === "]" || ch === "}") depth--;
      if (depth > MAX_NESTING) throw new ExportLimitError(`${where}: arrays and objects nested deeper than ${MAX_NESTING}`);
    }
    if (new RegExp(`[0-9]{${MAX_DIGITS + 1}}`).test(outside)) throw new ExportLimitError(`${where}: a number of more than ${MAX_DIGITS} digits`);
  });
}
