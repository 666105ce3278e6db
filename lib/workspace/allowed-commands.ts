// Which commands run_command may run: an allowed argv prefix, and no argument naming a path outside the workspace.
import { outsidePathArgument, unsafeProgramArgument } from "./workspace-paths.ts";
import { Refusal } from "./refusal.ts";

/** Refuses argv unless it starts with an allowed prefix and its further arguments name no path outside the workspace. */
export function checkCommand(argv: string[], { commands, root }: { commands: string[][]; root: string }): void {
  const allowed = commands.filter((prefix) => prefix.length > 0);
  // The longest matching prefix: arguments the slice spelled out itself are not second-guessed.
  const prefix = allowed
    .filter((p) => argv.length >= p.length && p.every((part, i) => argv[i] === part))
    .reduce<string[] | undefined>((longest, p) => (longest && longest.length >= p.length ? longest : p), undefined);
  if (!prefix) {
    const hint = allowed.length === 0
      ? "no commands are allowed"
      : `allowed: ${allowed.map((p) => JSON.stringify(p)).join(", ")}`;
    throw new Refusal("command_not_allowed", `Command ${JSON.stringify(argv)} is not allowed (${hint})`);
  }
  // Allowing ["ls"] must not allow `ls /`. A guard against naming paths outside, not a sandbox (see outsidePathArgument).
  const unsafe = unsafeProgramArgument([...argv.slice(0, 1), ...argv.slice(prefix.length)]);
  if (unsafe !== undefined) {
    throw new Refusal("command_not_allowed", `Command ${JSON.stringify(argv)} is refused: ${unsafe}`);
  }
  const outside = outsidePathArgument(argv.slice(prefix.length), { root });
  if (outside !== undefined) {
    throw new Refusal(
      "command_not_allowed",
      `Argument ${JSON.stringify(outside)} of ${JSON.stringify(argv)} names a path outside the workspace; ` +
        `after the allowed ${JSON.stringify(prefix)}, use relative paths that stay inside it`,
    );
  }
}
