/** Every class the log must escape, one representative or more each. */
export const UNSAFE_CHARS: readonly string[] = [
  "\u0000", "\u0007", "\u001b", "\u007f", // C0, DEL
  "\u0080", "\u0085", "\u009b", "\u009f", // C1 (NEL, CSI)
  "\u061c", "\u200e", "\u200f", "\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069", // bidi
  "\u200b", "\u200c", "\u200d", "\u2060", "\u2061", "\u2062", "\u2063", "\u2064", "\ufeff", "\u180e", "\u00ad", // invisible format
  "\ufff9", "\u{e0041}", "\u{e007f}", // interlinear annotation, tag characters (ASCII smuggling)
  "\u2028", "\u2029", // line and paragraph separators
  "\ud800", "\udfff", // lone surrogates
];
