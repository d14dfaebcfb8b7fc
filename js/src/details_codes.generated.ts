// Generated from tfprof_nb/offline/details_codes.py by
// `python -m tfprof_nb.offline.details_codes`: edit that file, not this one.
// The text codes of an event-details block (tfprof_nb.offline.details).
/** The text of the event's own start (the page writes the number). */
export const OWN_START = 0xffffffff;
/** The text of the event's own duration. */
export const OWN_DURATION = 0xfffffffe;
/** The text of the event's own event id. */
export const OWN_ID = 0xfffffffd;
/** The event has no such field (no step, no category). */
export const NO_ROW = 0xfffffffc;
/** The key of an event's stats in its details: (key, text) pairs after its fields. */
export const ARGUMENTS = "Arguments";
