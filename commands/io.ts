// The effects a command may use, passed in by main.ts (tests pass fakes).
export type Io = {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  readStdin: () => Promise<string>;
  env: Record<string, string | undefined>;
  cwd: string;
  /** stderr is a terminal (live progress) */
  isTTY: boolean;
  /** The terminal's width when stderr is one: a live line never passes it (it would wrap and scroll). */
  columns?: number;
  /** Colour on stderr: a terminal, NO_COLOR unset, TERM not dumb. */
  color?: boolean;
  /** The clock (ms since the epoch) for dates a command checks against today; default Date.now. */
  now?: () => number;
  /** Aborted on SIGINT/SIGTERM. */
  signal: AbortSignal;
};
