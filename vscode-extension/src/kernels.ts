// Which kernel a position belongs to, from the text alone (the server is not needed to name it). No `vscode`
// import.

const ITEM = /^(kernel|reference|inputs|sizes)\s+([A-Za-z_][A-Za-z_0-9]*)/;

export interface KernelItem {
  name: string;
  /** 0-based line of the `kernel` header. */
  line: number;
}

export function kernelsIn(text: string): KernelItem[] {
  const out: KernelItem[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    const m = ITEM.exec(line);
    if (m && m[1] === "kernel") {
      out.push({ name: m[2], line: i });
    }
  });
  return out;
}

/**
 * The kernel whose item (kernel, reference, inputs or sizes block) contains `line`; the only kernel of the file
 * when the line is outside every item; undefined when that leaves a choice.
 */
export function kernelAt(text: string, line: number): string | undefined {
  const lines = text.split(/\r?\n/);
  for (let i = Math.min(line, lines.length - 1); i >= 0; i--) {
    const m = ITEM.exec(lines[i]);
    if (m) {
      return m[2];
    }
    if (i < line && /^[^\s#]/.test(lines[i])) {
      break; // another top-level line (a stray statement): not inside an item
    }
  }
  const kernels = kernelsIn(text);
  return kernels.length === 1 ? kernels[0].name : undefined;
}
