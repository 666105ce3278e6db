// `loom doctor [-m PROVIDER/MODEL]`: the cheapest live check that a model works with Loom (lib/adapters/run-doctor.ts),
// printed as a table or one JSON object; the exit code is the result's, from endingOf.
import { runDoctor } from "../lib/adapters/run-doctor.ts";
import { modelFacts } from "../lib/doctor/doctor.ts";
import { renderDoctor } from "../lib/doctor/render-doctor.ts";
import { UsageError } from "../lib/errors.ts";
import { parseCommand } from "./cli-spec.ts";
import { userSettings } from "./config.ts";
import type { Io } from "./io.ts";
import { readModels } from "./models.ts";
import { DOCTOR_SPEC } from "./specs.ts";

export async function doctorCommand(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseCommand(DOCTOR_SPEC, argv, { command: "doctor" });
  if (positionals.length > 0) throw new UsageError("loom doctor takes no arguments (the model is -m PROVIDER/MODEL)");
  const baseUrlFlag = values["base-url"];
  if (baseUrlFlag !== undefined && !/^https?:\/\/[^/]/.test(baseUrlFlag)) {
    throw new UsageError(`--base-url ${JSON.stringify(baseUrlFlag)}: expected an http(s) URL`);
  }
  const settings = userSettings(io, { model: values.model, base_url: baseUrlFlag });
  const model = settings.model.value;
  if (model === null) {
    throw new UsageError('loom doctor needs a model: -m PROVIDER/MODEL, LOOM_MODEL, or "model" in the config file');
  }
  // As for run: the config file's base_url is below the provider's own variable.
  const fromConfig = settings.base_url.source === "config";
  const models = readModels(values.models, io.cwd);
  const result = await runDoctor({
    model,
    env: io.env,
    baseUrl: fromConfig ? undefined : settings.base_url.value ?? undefined,
    defaultBaseUrl: fromConfig ? settings.base_url.value ?? undefined : undefined,
    models,
    facts: modelFacts(models, model, { today: new Date().toISOString().slice(0, 10) }),
    nonce: crypto.randomUUID().slice(0, 8),
    signal: io.signal,
  });
  io.stdout(values.json ? `${JSON.stringify(result, null, 2)}\n` : renderDoctor(result));
  return result.exit_code;
}
