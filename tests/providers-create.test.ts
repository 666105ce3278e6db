// createProvider: credentials only from the environment, base URL precedence, capabilities as data.
import assert from "node:assert/strict";
import { test } from "node:test";
import { createProvider } from "../lib/run/create-provider.ts";
import { StartupError } from "../lib/errors.ts";
import { endingOf } from "../lib/ending.ts";
import { ProviderConfig } from "../lib/settings/provider-config.ts";
import {
  anthropicAnswer,
  openAIAnswer,
  sampleTurnRequest,
  startAnthropicServer,
  startOpenAIServer,
} from "./helpers/fake-provider-servers.ts";

function startupError(run: () => unknown): StartupError {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof StartupError, `expected a StartupError, got ${error}`);
    return error;
  }
  assert.fail("expected a StartupError");
}

test("createProvider: a missing key is a startup error naming the variable (exit 3)", () => {
  const anthropic = startupError(() => createProvider({ kind: "anthropic", model: "m" }, { env: {} }));
  assert.equal(anthropic.code, "missing_credential");
  assert.equal(endingOf({ threw: anthropic }).exitCode, 3);
  assert.match(anthropic.message, /ANTHROPIC_API_KEY/);
  assert.match(
    startupError(() => createProvider({ kind: "openai", model: "m" }, { env: { OPENAI_API_KEY: " " } })).message,
    /OPENAI_API_KEY/,
  );
  const custom = startupError(() =>
    createProvider({ kind: "openai-compatible", model: "m", api_key_env: "MY_KEY" }, { env: { OTHER: "value-xyz" } })
  );
  assert.match(custom.message, /MY_KEY/);
  assert.ok(!custom.message.includes("value-xyz"));
});

test("createProvider: invalid configurations fail at startup with the field", () => {
  assert.match(
    startupError(() => createProvider({ kind: "anthropic", model: "" }, { env: { ANTHROPIC_API_KEY: "k" } })).message,
    /model/,
  );
  assert.match(
    startupError(() =>
      createProvider({ kind: "openai", model: "m", response_format: "json_object" }, { env: { OPENAI_API_KEY: "k" } })
    ).message,
    /response_format applies only to kind "openai-compatible"/,
  );
  assert.match(
    startupError(() =>
      createProvider({ kind: "anthropic", model: "m" }, {
        env: { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: "not a url" },
      })
    ).message,
    /ANTHROPIC_BASE_URL/,
  );
  assert.equal(ProviderConfig.safeParse({ kind: "gemini", model: "m" }).success, false);
});

test("createProvider: capabilities come from the model table, not guessed from the model id", () => {
  const env = { ANTHROPIC_API_KEY: "k", OPENAI_API_KEY: "k" };
  // An id the table does not know gets the conservative defaults (the schema in the prompt), whatever it looks like.
  assert.deepEqual(createProvider({ kind: "anthropic", model: "gpt-4o" }, { env }).capabilities, {
    prompt_caching: true,
    schema_enforcement: false,
  });
  assert.deepEqual(createProvider({ kind: "anthropic", model: "claude-sonnet-5-5" }, { env }).capabilities, {
    prompt_caching: true,
    schema_enforcement: true,
  });
  assert.deepEqual(createProvider({ kind: "openai", model: "claude" }, { env }).capabilities, {
    prompt_caching: true,
    schema_enforcement: true,
  });
  // A local server's model (the table's `local`): its prefix cache is the server's own, read from its counters.
  assert.deepEqual(
    createProvider({ kind: "openai-compatible", model: "m", response_format: "none" }, { env }).capabilities,
    {
      prompt_caching: true,
      schema_enforcement: false,
    },
  );
  assert.equal(createProvider({ kind: "openai-compatible", model: "m" }, { env }).name, "openai-compatible");
});

test("createProvider: ANTHROPIC_BASE_URL and OPENAI_BASE_URL override the public endpoints", async () => {
  const anthropic = await startAnthropicServer([anthropicAnswer({ action: "finish" })]);
  const openai = await startOpenAIServer([openAIAnswer({ action: "finish" })]);
  try {
    const env = {
      ANTHROPIC_API_KEY: "ka",
      OPENAI_API_KEY: "ko",
      ANTHROPIC_BASE_URL: anthropic.baseUrl,
      OPENAI_BASE_URL: `${openai.baseUrl}/`,
    };
    await createProvider({ kind: "anthropic", model: "m" }, { env }).complete(sampleTurnRequest(), { model: "m" });
    await createProvider({ kind: "openai", model: "m" }, { env }).complete(sampleTurnRequest(), { model: "m" });
    assert.equal(anthropic.requests.length, 1);
    assert.equal(openai.requests.length, 1);
    assert.equal(openai.requests[0].path, "/v1/chat/completions");
  } finally {
    await anthropic.close();
    await openai.close();
  }
});

test("createProvider: a configured base_url wins over the environment", async () => {
  const configured = await startAnthropicServer([anthropicAnswer({ action: "finish" })]);
  const fromEnv = await startAnthropicServer([anthropicAnswer({ action: "finish" })]);
  try {
    const env = { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fromEnv.baseUrl };
    await createProvider({ kind: "anthropic", model: "m", base_url: configured.baseUrl }, { env }).complete(
      sampleTurnRequest(),
      { model: "m" },
    );
    assert.equal(configured.requests.length, 1);
    assert.equal(fromEnv.requests.length, 0);
  } finally {
    await configured.close();
    await fromEnv.close();
  }
});

test("createProvider: an injected fetch is used for the call", async () => {
  const urls: string[] = [];
  const fetch = (input: string) => {
    urls.push(input);
    return Promise.resolve(
      new Response(JSON.stringify(openAIAnswer({ action: "finish" }).body), {
        status: 200,
        headers: { "content-type": "application/json" },
      }),
    );
  };
  const provider = createProvider({ kind: "openai-compatible", model: "m", base_url: "http://127.0.0.1:9/v1" }, {
    env: {},
    fetch,
  });
  const answer = await provider.complete(sampleTurnRequest(), { model: "m" });
  assert.deepEqual(answer.value, { action: "finish" });
  assert.deepEqual(urls, ["http://127.0.0.1:9/v1/chat/completions"]);
});

test("createProvider: cache_ttl 1h marks every Anthropic cache breakpoint with a 1-hour lifetime but the step's own (read at once by its arguments call); 5m leaves the default", async () => {
  const server = await startAnthropicServer([
    anthropicAnswer({ action: "finish" }),
    anthropicAnswer({ action: "finish" }),
  ]);
  try {
    const env = { ANTHROPIC_API_KEY: "ka", ANTHROPIC_BASE_URL: server.baseUrl };
    for (const cache_ttl of ["1h", "5m"] as const) {
      await createProvider({ kind: "anthropic", model: "m", cache_ttl }, { env }).complete(sampleTurnRequest(), {
        model: "m",
      });
    }
    const markers = server.requests.map((r) => {
      const body = r.body as {
        system?: { cache_control?: unknown }[];
        messages: { content: { cache_control?: unknown }[] }[];
      };
      return [...(body.system ?? []), ...body.messages[0].content].flatMap((b) =>
        b.cache_control ? [b.cache_control] : []
      );
    });
    assert.ok(markers[0].length > 0);
    assert.ok(markers[0].slice(0, -1).every((m) => JSON.stringify(m) === '{"type":"ephemeral","ttl":"1h"}'));
    assert.equal(JSON.stringify(markers[0].at(-1)), '{"type":"ephemeral"}', "the working state's, last");
    assert.ok(markers[1].length > 0);
    assert.ok(markers[1].every((m) => JSON.stringify(m) === '{"type":"ephemeral"}'));
  } finally {
    await server.close();
  }
  const wrong = startupError(() =>
    createProvider({ kind: "openai", model: "m", cache_ttl: "1h" }, { env: { OPENAI_API_KEY: "k" } })
  );
  assert.match(wrong.message, /cache_ttl applies only to kind "anthropic", not "openai"/);
  assert.equal(ProviderConfig.safeParse({ kind: "anthropic", model: "m", cache_ttl: "2h" }).success, false);
});
