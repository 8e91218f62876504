import type { IncomingHttpHeaders } from "node:http";
import { headerCredentials, isSecretMemberName, longestFirst, redactUrlQuery, scrubValues } from "../../log/redact.js";
import { formatTarget } from "../../proxy/target.js";
import type { CapturedBody } from "./capture.js";
import { classifyStep } from "./classify.js";
import type { AuthFlow, AuthStep } from "./flow.js";
import { parseRequestBody, parseResponseBody } from "./parse-body.js";
import { authorizationScheme, capTexts } from "./wire-values.js";

export interface BuiltRecord {
  level: "info" | "warn";
  fields: Record<string, unknown>;
}

/** The `auth` record of a finished exchange, or undefined when it turned out to be no OAuth traffic. */
export function authRecord(flow: AuthFlow): BuiltRecord | undefined {
  const ex = flow.ex;
  const requestBody = flow.request?.result();
  const responseBody = flow.response?.result();
  const requestValue = requestBody ? parseRequestBody(requestBody, ex.request.headers) : undefined;
  const responseJson = responseBody ? parseResponseBody(responseBody) : undefined;

  const classified = classifyStep(flow, requestValue, responseJson?.value);
  if (!classified) return undefined;
  const { step, details } = classified;

  const fields: Record<string, unknown> = {
    event: "auth",
    step,
    flow: ex.id,
    server: formatTarget(ex.server),
    method: ex.request.method,
    path: redactUrlQuery(ex.request.path),
    status: ex.response?.status ?? null,
    authorization: authorizationScheme(ex.request.headers.authorization),
  };
  if (flow.challenge) fields.challenge = flow.challenge;
  Object.assign(fields, details);
  addBodyProblems(fields, flow, step, requestBody, responseBody, responseJson?.problem);
  if (ex.error) fields.exchangeError = ex.error.code;

  const failedOAuth = (step === "token" || step === "registration") && (ex.response?.status ?? 0) >= 400;
  const secrets = knownSecrets(ex.request.headers, requestValue, responseJson?.value);
  return { level: ex.error || failedOAuth ? "warn" : "info", fields: capTexts(scrubValues(fields, secrets)) as Record<string, unknown> };
}

/** `truncated` and `bodyProblems`, for the bodies the record is made from only. */
function addBodyProblems(
  fields: Record<string, unknown>,
  flow: AuthFlow,
  step: AuthStep,
  requestBody: CapturedBody | undefined,
  responseBody: CapturedBody | undefined,
  responseParseProblem: string | undefined,
): void {
  const ex = flow.ex;
  const problems: Record<string, string> = {};
  const usesRequest = step === "token" || step === "registration";
  const usesResponse = step !== "challenge" && ex.response !== null;
  let truncated = false;
  if (usesRequest && requestBody) {
    truncated ||= requestBody.truncated;
    if (requestBody.problem) problems.request = requestBody.problem;
  }
  if (usesResponse && responseBody) {
    truncated ||= responseBody.truncated;
    const problem = responseBody.problem ?? responseParseProblem;
    // An empty error page (a 404 on a discovery URL the client merely tried) is no body problem.
    const emptyError = responseBody.text === "" && (ex.response?.status ?? 0) >= 300;
    if (problem && !emptyError) problems.response = problem;
  }
  if (truncated) fields.truncated = true;
  if (Object.keys(problems).length > 0) fields.bodyProblems = problems;
}

/**
 * OAuth codes and secrets are removed by value from 6 characters (short test codes exist; these members hold
 * nothing else), header credentials only from MIN_SCRUBBED_CHARS (a cookie may be `theme=dark`).
 */
const MIN_BODY_SECRET_CHARS = 6;

/**
 * The credentials this exchange carried (Authorization credentials, secret members of both bodies). Servers
 * echo them in free text ("refresh token 8xZ… expired"), where no pattern can spot them: they are removed
 * by value from every string of the record.
 */
function knownSecrets(
  headers: IncomingHttpHeaders,
  requestValue: Record<string, unknown> | undefined,
  responseValue: Record<string, unknown> | undefined,
): string[] {
  const found = new Set<string>(headerCredentials(headers));
  const add = (value: unknown): void => {
    if (typeof value === "string" && value.length >= MIN_BODY_SECRET_CHARS) found.add(value);
    else if (Array.isArray(value)) value.forEach(add);
  };
  for (const body of [requestValue, responseValue]) {
    if (!body) continue;
    for (const [name, value] of Object.entries(body)) if (name === "code" || isSecretMemberName(name)) add(value);
  }
  return longestFirst(found);
}
