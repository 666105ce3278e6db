// The context policies by name: legacy (the rolling transcript) and bounded (the 64 KiB working context).
import { z } from "zod";

export const ContextPolicyName = z.enum(["legacy", "bounded"]);
export type ContextPolicyName = z.infer<typeof ContextPolicyName>;
