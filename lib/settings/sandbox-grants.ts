// The sandbox a run's processes get: the floor the user sets (--sandbox, LOOM_SANDBOX) and the relaxations only the
// user grants, which a file may narrow, never widen. Pure.
import { SandboxMode } from "../sandbox-state.ts";
import { StartupError } from "../errors.ts";
import { type SettingFlags, SETTINGS } from "./setting-table.ts";
import { byDefault, envValue, flagName, found, pick, type Setting } from "./sources.ts";

/** The sandbox floor alone (--sandbox, else LOOM_SANDBOX, else auto): for a workspace made outside a run. */
export function sandboxFloor(flags: SettingFlags, env: Record<string, string | undefined>): Setting<SandboxMode> {
  return pick("sandbox", {
    flag: found(flags.sandbox, flagName("sandbox")),
    environment: found(envValue(env, "sandbox", SandboxMode), SETTINGS.sandbox.env),
    "default": byDefault<SandboxMode>("auto"),
  });
}

/** What the sandbox of a run lets its processes have beyond the floor: network, host variables, read-only mounts. */
export type SandboxRelaxations = { network: boolean; env: readonly string[]; read_only: readonly string[] };

/**
 * The relaxations a run's processes get: only what the user granted (the command line; a library caller's flags),
 * narrowed by what the slice's file says. A request, catalog, recording or suite is data someone may have handed you:
 * asking for more than was granted is refused, in one line naming the file and the field.
 */
export function grantedSandbox(
  asked: { network?: boolean; env?: readonly string[]; read_only?: readonly string[] } | undefined,
  flags: SettingFlags,
  source: string,
): SandboxRelaxations {
  const refuse = (field: string, what: string, flag: string) => {
    throw new StartupError(
      `${source}: ${field} ${what}; a file may only narrow the sandbox (${flag} on the command line allows it)`,
      "sandbox_relaxation_refused",
    );
  };
  const network = flags.sandbox_network === true;
  if (asked?.network === true && !network) refuse("sandbox.network", "asks for the network", "--sandbox-network");
  const grantedEnv = flags.sandbox_env ?? [];
  asked?.env?.forEach((name, i) => {
    if (!grantedEnv.includes(name)) {
      refuse(`sandbox.env[${i}]`, `passes the host variable ${JSON.stringify(name)}`, `--sandbox-env ${name}`);
    }
  });
  const grantedPaths = flags.sandbox_read_only ?? [];
  asked?.read_only?.forEach((path, i) => {
    if (!grantedPaths.includes(path)) {
      refuse(`sandbox.read_only[${i}]`, `mounts the host path ${JSON.stringify(path)}`, `--sandbox-read-only ${path}`);
    }
  });
  return {
    network: network && asked?.network !== false,
    env: asked?.env ?? grantedEnv,
    read_only: asked?.read_only ?? grantedPaths,
  };
}
