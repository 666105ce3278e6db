// The effects a command may use, passed in by main.ts (tests pass fakes).
export type Io = {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  readStdin: () => Promise<string>;
  env: Record<string, string | undefined>;
  cwd: string;
  /** stderr is a terminal (live progress) */
  isTTY: boolean;
  /** Aborted on SIGINT/SIGTERM. */
  signal: AbortSignal;
};
