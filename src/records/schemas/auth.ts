/** The `auth` record: one OAuth exchange (src/mcp/auth/), with what each step asked and answered. */
import { z } from "zod";
import { common, nullableString } from "./common.js";

const text = z.string();
const optionalText = z.string().optional();
const textList = z.array(z.string()).optional();

const ChallengeSchema = z.strictObject({
  scheme: z.string(),
  realm: optionalText,
  resource_metadata: optionalText,
  scope: optionalText,
  error: optionalText,
  error_description: optionalText,
});

const MetadataSchema = z.strictObject({
  resource: optionalText,
  issuer: optionalText,
  authorization_endpoint: optionalText,
  token_endpoint: optionalText,
  registration_endpoint: optionalText,
  authorization_servers: textList,
  scopes_supported: textList,
  code_challenge_methods_supported: textList,
  grant_types_supported: textList,
  token_endpoint_auth_methods_supported: textList,
  client_id_metadata_document_supported: z.boolean().optional(),
});

const TokenRequestSchema = z.strictObject({
  grant_type: text,
  client_id: optionalText,
  scope: optionalText,
  resource: z.union([z.string(), z.array(z.string())]).optional(),
  redirect_uri: optionalText,
  code: z.boolean(),
  code_verifier: z.boolean(),
  refresh_token: z.boolean(),
  client_secret: z.boolean(),
  client_assertion: z.boolean(),
  "pre-authorized_code": z.literal(true).optional(),
  tx_code: z.literal(true).optional(),
  subject_token: z.literal(true).optional(),
  actor_token: z.literal(true).optional(),
  assertion: z.literal(true).optional(),
  device_code: z.literal(true).optional(),
  auth_req_id: z.literal(true).optional(),
  password: z.literal(true).optional(),
  client_auth: z.enum(["client_secret_basic", "private_key_jwt", "client_secret_post", "none"]),
});

const TokenResponseSchema = z.strictObject({
  token_type: optionalText,
  issued_token_type: optionalText,
  expires_in: z.number().optional(),
  scope: optionalText,
  access_token: z.boolean(),
  refresh_token: z.boolean(),
  id_token: z.boolean(),
  error: optionalText,
  error_description: optionalText,
});

const RegistrationRequestSchema = z.strictObject({
  client_name: optionalText,
  redirect_uris: z.array(z.string()),
  grant_types: textList,
  response_types: textList,
  token_endpoint_auth_method: optionalText,
  scope: optionalText,
});

const RegistrationResponseSchema = z.strictObject({
  client_id: optionalText,
  client_secret: z.boolean(),
  client_secret_expires_at: z.number().optional(),
  registration_access_token: z.boolean(),
  token_endpoint_auth_method: optionalText,
  error: optionalText,
  error_description: optionalText,
});

const bodyProblem = z.enum(["truncated", "aborted", "invalid_json", "not_json", "decode_error", "unsupported_encoding", "decoder_failed"]);

/** What every step has. */
const exchange = {
  ...common("info", "warn"),
  event: z.literal("auth"),
  flow: z.string(),
  server: z.string(),
  method: z.string(),
  path: z.string(),
  status: z.number().int().nullable(),
  authorization: nullableString,
  challenge: ChallengeSchema.optional(),
  truncated: z.literal(true).optional(),
  bodyProblems: z.strictObject({ request: bodyProblem.optional(), response: bodyProblem.optional() }).optional(),
  exchangeError: optionalText,
};

export const AuthRecordSchema = z.discriminatedUnion("step", [
  z.strictObject({ ...exchange, step: z.literal("challenge") }),
  z.strictObject({
    ...exchange,
    step: z.literal("discovery"),
    document: z.enum(["oauth-protected-resource", "oauth-authorization-server", "openid-configuration"]),
    metadata: MetadataSchema.optional(),
  }),
  z.strictObject({ ...exchange, step: z.literal("token"), request: TokenRequestSchema, response: TokenResponseSchema.optional() }),
  z.strictObject({ ...exchange, step: z.literal("registration"), request: RegistrationRequestSchema, response: RegistrationResponseSchema.optional() }),
]);
export type AuthRecord = z.infer<typeof AuthRecordSchema>;
