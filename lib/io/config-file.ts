// Reading a config file Loom finds by name (the user's config.jsonc, a project's .loom/config.jsonc, also in a folder
// above the workspace such as /tmp): a regular file of at most MAX_CONFIG_BYTES, opened without blocking (a FIFO
// there would hang the run, SIGINT and SIGTERM unheard) and checked with fstat before a byte is read (a link to
// /dev/zero would fill the memory). A project's file is not read through a link out of its folder (a link to
// /etc/shadow, read as root), and no problem said here quotes the file's content.
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, realpathSync } from "node:fs";
import { Buffer } from "node:buffer";
import { dirname } from "node:path";
import { describeFsError, errorCode } from "../errors.ts";

/** The largest config file Loom reads: 1 MiB (a config file is a few hundred bytes). */
export const MAX_CONFIG_BYTES = 1024 * 1024;

export type ConfigRead =
  | { ok: true; text: string }
  | { ok: false; missing: true }
  | { ok: false; missing: false; problem: string };

const missing = { ok: false, missing: true } as const;
const problem = (text: string): ConfigRead => ({ ok: false, missing: false, problem: text });

/**
 * A config file's text, or that there is none (nothing at the path, or a folder on the way is a file), or the one
 * problem that keeps it from being read. `inFolder`: the folder holding it is no link, and the file is none either,
 * or one to a file in that same folder.
 */
export function readConfigFile(path: string, { inFolder = false }: { inFolder?: boolean } = {}): ConfigRead {
  let target = path;
  try {
    const info = lstatSync(path);
    if (inFolder && lstatSync(dirname(path)).isSymbolicLink()) {
      return problem("is in a folder that is a link; a project's config file is read only from a folder of its own");
    }
    if (inFolder && info.isSymbolicLink()) {
      target = realpathSync(path);
      if (dirname(target) !== realpathSync(dirname(path))) {
        return problem("is a link out of its folder; a project's config file is read only from its own folder");
      }
    }
  } catch (error) {
    const code = errorCode(error);
    if (code === "ENOENT" || code === "ENOTDIR") return missing; // a link to nothing too, as before
    return problem(describeFsError(error));
  }
  let fd: number;
  try {
    fd = openSync(target, constants.O_RDONLY | constants.O_NONBLOCK | (inFolder ? constants.O_NOFOLLOW : 0));
  } catch (error) {
    const code = errorCode(error);
    if (code === "ENOENT") return missing;
    if (code === "ELOOP") return problem("changed into a link while it was opened");
    return problem(describeFsError(error));
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) {
      const kind = info.isFIFO()
        ? "a FIFO"
        : info.isCharacterDevice() || info.isBlockDevice()
        ? "a device"
        : info.isDirectory()
        ? "a folder"
        : info.isSocket()
        ? "a socket"
        : "not a file";
      return problem(`is ${kind}, not a regular file`);
    }
    const tooLarge = problem(`is over the ${MAX_CONFIG_BYTES}-byte (1 MiB) cap of a config file`);
    if (info.size > MAX_CONFIG_BYTES) return tooLarge;
    const buffer = Buffer.alloc(MAX_CONFIG_BYTES + 1);
    let length = 0;
    for (;;) {
      const read = readSync(fd, buffer, length, buffer.length - length, null);
      if (read === 0) break;
      length += read;
      if (length > MAX_CONFIG_BYTES) return tooLarge; // grew since fstat
    }
    try {
      return { ok: true, text: new TextDecoder("utf-8", { fatal: true }).decode(buffer.subarray(0, length)) };
    } catch {
      return problem("is not UTF-8 text");
    }
  } catch (error) {
    return problem(describeFsError(error));
  } finally {
    closeSync(fd);
  }
}
