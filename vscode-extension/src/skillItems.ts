// The skills at the cursor as pick items: applicable ones first, in the server's order, then the ones that do
// not apply, each with the precondition that failed. No `vscode` import.

/** The parts of an LSP CodeAction this list needs. */
export interface SkillAction {
  title: string;
  kind?: string;
  disabled?: { reason: string };
}

export interface SkillItem {
  label: string;
  description?: string;
  detail?: string;
  /** Index of the action in the server's answer. */
  index: number;
  applicable: boolean;
}

export function skillItems(actions: readonly SkillAction[], skillKind: string): SkillItem[] {
  const items = actions
    .map((action, index) => ({ action, index }))
    .filter(({ action }) => action.kind === undefined || action.kind === skillKind || action.kind.startsWith(`${skillKind}.`))
    .map(({ action, index }): SkillItem => {
      // the server writes "Title  (evidence or cost)" for an applicable skill
      const split = /^(.*?)\s{2}\((.*)\)$/.exec(action.title);
      const title = split ? split[1] : action.title;
      if (action.disabled !== undefined) {
        return { label: `$(circle-slash) ${title}`, description: "does not apply here", detail: action.disabled.reason, index, applicable: false };
      }
      return { label: `$(wrench) ${title}`, description: split?.[2], index, applicable: true };
    });
  return [...items.filter((i) => i.applicable), ...items.filter((i) => !i.applicable)];
}
