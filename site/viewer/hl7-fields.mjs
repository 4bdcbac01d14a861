// Field names of the common HL7 v2 segments, as the HL7 v2.5.1 standard's segment definitions
// name them (see HL7-FIELDS.md for where they come from and under what licence). The table is
// data, typed by hand into hl7-fields.json: index 0 of each list is field 1 (for MSH, MSH-1 is the
// field separator). A name shows beside its field in the HL7 view; fields past the end of a list
// show their number alone, as do the fields of segments not listed here (Z segments, others).
import fields from './hl7-fields.json' with { type: 'json' };

export const HL7_FIELDS_VERSION = fields.version;

export const HL7_FIELDS = fields.segments;

/** The name of field `n` (1-based) of segment `id`, or '' when the table has none. */
export function fieldName(id, n) {
  const list = HL7_FIELDS[id];
  return (list && list[n - 1]) || '';
}
