// `loom doctor [-m PROVIDER/MODEL]`: the cheapest live check that a model works with Loom (lib/doctor/run-doctor.ts),
// printed as a table or one JSON object; the exit code is the result's, from endingOf.
import { runDoctor } from "../lib/doctor/run-doctor.ts";
import { modelFacts } from "../lib/doctor/doctor.ts";
import { renderDoctor } from "../lib/doctor/render-doctor.ts";
import { UsageError } from "../lib/errors.ts";
import { parseCommand } from "./cli-spec.ts";
import { userSettings } from "./config.ts";
import type { Io } from "./io.ts";
import { readModels } from "./models-table.ts";
import { DOCTOR_SPEC } from "./specs.ts";

export async function doctorCommand(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseCommand(DOCTOR_SPEC, argv, { command: "doctor" });
  if (positionals.length > 0) {
    throw new UsageError(`Unexpected argument ${JSON.stringify(positionals[0])}: the model is -m PROVIDER/MODEL`);
  }
  // The model and base URL as a run resolves them (lib/settings/settings.ts): one precedence, one URL check.
  const user = userSettings(io, { model: values.model, base_url: values["base-url"] });
  const model = user.plan.settings.model.value;
  if (model === null) {
    throw new UsageError('A model is needed: -m PROVIDER/MODEL, LOOM_MODEL, or "model" in the config file');
  }
  const models = readModels(values.models, io);
  const result = await runDoctor({
    model,
    env: io.env,
    settings: user.plan,
    models,
    facts: modelFacts(models, model, { today: new Date().toISOString().slice(0, 10) }),
    nonce: crypto.randomUUID().slice(0, 8),
    signal: io.signal,
  });
  io.stdout(values.json ? `${JSON.stringify(result, null, 2)}\n` : renderDoctor(result));
  return result.exit_code;
}
