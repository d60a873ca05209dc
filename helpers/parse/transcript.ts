/**
 * Captured outputs often arrive as transcripts rather than raw command output: a provenance header,
 * markdown fences, shell prompts, echoed commands, or every line commented out with `# `. This strips
 * those artefacts (used by `parse --transcript` and for the shared samples) before a parser runs.
 * Blank lines are kept so line numbers in errors still point at the original text.
 */
const COMMANDS =
  /^(\$ |# )?(sudo )?(kubectl|cilium|cilium-dbg|bpftool|tc|ip|ss|netstat|iptables|iptables-save|iptables-legacy-save|ip6tables-save|curl|c\d)(\s|$)/;
const PROMPT = /^\S+@\S+[:~][^#$]*[#$] /;
const FENCE = /^```/;
const SOURCE = /^# source: /;

export function stripTranscript(input: string): string {
  const lines = input.split("\n");
  const content = lines.filter((l) => l.trim() !== "");
  const commented =
    content.length > 0 && content.every((l) => l.startsWith("# ") || SOURCE.test(l) || l === "#");
  return lines
    .map((l) => {
      if (SOURCE.test(l) || FENCE.test(l) || PROMPT.test(l) || COMMANDS.test(l)) return "";
      return commented ? l.replace(/^# ?/, "") : l;
    })
    .join("\n");
}
