// The context policies by name: legacy (the rolling transcript) and bounded (the 64 KiB working context).
import { z } from "zod";

export const ContextPolicyName = z.enum(["legacy", "bounded"]);
export type ContextPolicyName = z.infer<typeof ContextPolicyName>;
/** The policy a run uses when nothing (flag, environment, config, catalog, request) names one. */
export const DEFAULT_POLICY: ContextPolicyName = "legacy";

/** What code outside a policy's own request building may ask of it. */
export type PolicyTraits = {
  /** Every request, the classification request included, is held to the 64 KiB ceiling (the 32/48/64 KiB lines). */
  ceiling: boolean;
  /** Retained outputs are cut to previews, so a preview mode (compact, balanced, wide) applies. */
  previews: boolean;
};

/**
 * Every policy's traits, by name: the one place to ask "is this run bounded?". A name added to ContextPolicyName
 * without its entry here (and in lib/context/context.ts's CONTEXTS) fails typechecking (tests/policy-registry.test.ts).
 */
export const CONTEXT_POLICIES: Readonly<Record<ContextPolicyName, Readonly<PolicyTraits>>> = {
  legacy: { ceiling: false, previews: false },
  bounded: { ceiling: true, previews: true },
};

/**
 * How many model calls a step takes: `two-call` (a selection call, then an arguments call for an action with
 * arguments) or `single-call` (one call answers with the action and its arguments). Either works with either policy.
 */
export const StepProtocol = z.enum(["two-call", "single-call"]);
export type StepProtocol = z.infer<typeof StepProtocol>;
export const DEFAULT_STEP_PROTOCOL: StepProtocol = "two-call";
/** A run's step limit when neither a flag, the request, the catalog nor a config file says one. */
export const DEFAULT_MAX_STEPS = 30;

/**
 * How much of each retained output a bounded request previews: `compact` (512 B, the SPEC's floor), `balanced` (512 B
 * to 2 KiB by the room the tail has left; the default), `wide` (1 to 4 KiB by room). The newest output shows 8 KiB in
 * each.
 */
export const PreviewMode = z.enum(["compact", "balanced", "wide"]);
export type PreviewMode = z.infer<typeof PreviewMode>;
export const DEFAULT_PREVIEW_MODE: PreviewMode = "balanced";
