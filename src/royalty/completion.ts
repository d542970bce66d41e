// `royalty completion bash|zsh|fish`: a completion script written from the command tree itself
// (commander has none built in), so that it lists exactly the commands and options there are.
import type { Command, Option } from 'commander';
import { UsageError } from './output.ts';

interface Node {
  path: string[];
  description: string;
  subcommands: string[];
  options: string[];
}

function flagsOf(options: readonly Option[]): string[] {
  return options.flatMap((o) =>
    [o.long, o.short].filter((f): f is string => typeof f === 'string'),
  );
}

function walk(command: Command, path: string[], out: Node[]): void {
  out.push({
    path,
    description: command.description(),
    subcommands: command.commands.map((c) => c.name()),
    options: [...flagsOf(command.options), '--help'],
  });
  for (const sub of command.commands) walk(sub, [...path, sub.name()], out);
}

function nodesOf(program: Command): Node[] {
  const nodes: Node[] = [];
  walk(program, [], nodes);
  return nodes;
}

function bash(program: Command): string {
  const nodes = nodesOf(program);
  const globals = flagsOf(program.options);
  const cases = nodes
    .map(
      (n) =>
        `    "${n.path.join(' ')}") words="${[...n.subcommands, ...n.options, ...(n.path.length > 0 ? globals : [])].join(' ')}" ;;`,
    )
    .join('\n');
  return `# bash completion for royalty: eval "$(royalty completion bash)"
_royalty() {
  local cur path="" word i words
  cur="\${COMP_WORDS[COMP_CWORD]}"
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="\${COMP_WORDS[i]}"
    [[ "$word" == -* ]] && continue
    if [[ -z "$path" ]]; then candidate="$word"; else candidate="$path $word"; fi
    case "$candidate" in
${nodes.map((n) => `      "${n.path.join(' ')}") path="$candidate" ;;`).join('\n')}
    esac
  done
  case "$path" in
${cases}
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
  [[ \${#COMPREPLY[@]} -eq 0 ]] && COMPREPLY=($(compgen -f -- "$cur"))
  return 0
}
complete -F _royalty royalty
`;
}

function zsh(program: Command): string {
  return `#compdef royalty
# zsh completion for royalty: eval "$(royalty completion zsh)"
autoload -U +X bashcompinit && bashcompinit
${bash(program)}`;
}

function fishEscape(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/'/g, "\\'");
}

function fish(program: Command): string {
  const lines = [
    '# fish completion for royalty: royalty completion fish | source',
    'complete -c royalty -f',
  ];
  const nodes = nodesOf(program);
  const described = new Map(nodes.map((n) => [n.path.join(' '), n.description]));
  for (const node of nodes) {
    const condition =
      node.path.length === 0
        ? '__fish_use_subcommand'
        : `__fish_seen_subcommand_from ${node.path.at(-1)}${node.subcommands.length > 0 ? `; and not __fish_seen_subcommand_from ${node.subcommands.join(' ')}` : ''}`;
    for (const sub of node.subcommands) {
      const description = described.get([...node.path, sub].join(' ')) ?? '';
      lines.push(`complete -c royalty -n '${condition}' -a ${sub} -d '${fishEscape(description)}'`);
    }
    for (const flag of node.options.filter((f) => f.startsWith('--')))
      lines.push(`complete -c royalty -n '${condition}' -l ${flag.slice(2)}`);
  }
  return `${lines.join('\n')}\n`;
}

export function completionScript(program: Command, shell: string): string {
  switch (shell) {
    case 'bash':
      return bash(program);
    case 'zsh':
      return zsh(program);
    case 'fish':
      return fish(program);
    default:
      throw new UsageError(`No completion for ${shell}: bash, zsh or fish`);
  }
}
