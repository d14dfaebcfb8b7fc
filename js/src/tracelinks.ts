// Tables that lead to the trace viewer: in the dashboard, a click on a row of op stats, GPU
// kernel stats or HLO op stats shows that row's events in the trace (highlighted, the first
// framed).
import { type Cell } from "./columns";
import { type TraceFind, type ViewContext } from "./model";
import { type TableOptions } from "./table";

const KEYS: Record<TraceFind["table"], [string[], string]> = {
  ops: [["operation", "host_or_device"], "operation"],
  kernels: [["kernel_name"], "kernel_name"],
  hlo: [["hlo_op_name", "program_id"], "hlo_op_name"],
};

/** What finds the events of `row` of table `table`. */
export function findOf(table: TraceFind["table"], row: Record<string, Cell>): TraceFind {
  const [keys, label] = KEYS[table];
  return { table, key: Object.fromEntries(keys.map((k) => [k, row[k] ?? null])), label: String(row[label] ?? "") };
}

/** The options of a table of kind `table` whose rows lead to the trace (none outside the
 * dashboard: a table alone has no trace viewer beside it). */
export function traceRows(ctx: ViewContext | undefined, table: TraceFind["table"]): TableOptions {
  if (!ctx?.showInTrace) return {};
  return {
    rowTitle: "click: show its events in the trace viewer",
    onRow: (row) => ctx.showInTrace!(findOf(table, row)),
  };
}
