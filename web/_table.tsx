/**
 * The one table of the pages: its caption, a header row of the columns' names, and every cell
 * headed by its column's name (`data-label`), which web/static/site.css writes before the cell
 * when a narrow screen stacks each row into a card (`table.stack`). A page names its columns and
 * what each cell holds; the markup of the stacked layout is written here alone.
 */
import type { Child } from "hono/jsx";
import { givenAttrs } from "./_layout.tsx";

/** One column: its name, and what its cell holds for a row. */
export interface Column<Row> {
  /** The column's header, and on a narrow screen the heading of each of its cells. */
  label: string;
  cell: (row: Row, index: number) => Child;
  /** The class of each of its cells (`url` for an address that may break anywhere). */
  class?: string;
  /** Its cells name their rows (`<th scope="row">`), as a report's service names its line. */
  rowHeader?: true;
}

/**
 * A table of rows, stacked on a narrow screen. A column given as `null` is left out (one only
 * some viewers see); with no rows, `empty` stands instead of the table when it is given.
 */
export function Table<Row>(props: {
  caption?: Child;
  columns: readonly (Column<Row> | null)[];
  rows: readonly Row[];
  empty?: Child;
  /** Classes beside `stack` (`report-table`). */
  class?: string;
}) {
  if (props.rows.length === 0 && props.empty !== undefined) return <>{props.empty}</>;
  const columns = props.columns.filter((col): col is Column<Row> => col !== null);
  return (
    <table class={props.class ? `stack ${props.class}` : "stack"}>
      {props.caption === undefined ? null : <caption>{props.caption}</caption>}
      <thead>
        <tr>
          {columns.map((col) => <th scope="col">{col.label}</th>)}
        </tr>
      </thead>
      <tbody>
        {props.rows.map((row, i) => (
          <tr>
            {columns.map((col) => {
              const attrs = givenAttrs({ "data-label": col.label, class: col.class });
              return col.rowHeader
                ? <th scope="row" {...attrs}>{col.cell(row, i)}</th>
                : <td {...attrs}>{col.cell(row, i)}</td>;
            })}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
