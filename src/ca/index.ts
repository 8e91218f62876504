export { CaError } from "./errors.js";
export {
  CA_EXPIRY_WARNING_DAYS,
  CA_VALIDITY_DAYS,
  holdsCa,
  loadOrCreateCa,
  type CaInfo,
  type CertificateAuthority,
  type LoadCaOptions,
} from "./authority.js";
export {
  DEFAULT_LEAF_CACHE_SIZE,
  LEAF_RENEW_BEFORE_DAYS,
  LEAF_VALIDITY_DAYS,
  LeafIssuer,
  sharedLeafIssuer,
  type IssuedCertificate,
  type LeafIssuerOptions,
} from "./leaf-issuer.js";
export { parseHost, type CertificateSubject } from "./host-names.js";
