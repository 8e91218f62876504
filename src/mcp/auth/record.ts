import { headerCredentials, longestFirst, redactUrlQuery, scrubValues } from "../../log/redact.js";
import { bodyCredentials } from "./body-credentials.js";
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
  const secrets = longestFirst([
    ...headerCredentials(ex.request.headers),
    ...(requestBody ? bodyCredentials(requestBody, ex.request.headers) : []),
    ...(responseBody && ex.response ? bodyCredentials(responseBody, ex.response.headers) : []),
  ]);
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
