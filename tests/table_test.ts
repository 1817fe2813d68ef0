import assert from "node:assert/strict";
import { Table } from "../web/_table.tsx";

/** The HTML a `Table` renders. */
const html = async (props: Parameters<typeof Table<{ name: string; n: number }>>[0]) =>
  String(await Table(props));

const rows = [{ name: "Ann", n: 1 }, { name: "<Bo>", n: 2 }];

Deno.test("table: each cell is headed by its column's label, a row header as th", async () => {
  const out = await html({
    caption: "People",
    rows,
    class: "report-table",
    columns: [
      { label: "Name", rowHeader: true, cell: (r) => r.name },
      { label: "Count", class: "num", cell: (r, i) => `${r.n} at ${i}` },
    ],
  });
  assert.equal(
    out,
    '<table class="stack report-table"><caption>People</caption><thead><tr>' +
      '<th scope="col">Name</th><th scope="col">Count</th></tr></thead><tbody>' +
      '<tr><th scope="row" data-label="Name">Ann</th><td data-label="Count" class="num">1 at 0</td></tr>' +
      '<tr><th scope="row" data-label="Name">&lt;Bo&gt;</th><td data-label="Count" class="num">2 at 1</td></tr>' +
      "</tbody></table>",
  );
});

Deno.test("table: a column given as null is left out of the header and of every row", async () => {
  const out = await html({
    rows,
    columns: [{ label: "Name", cell: (r) => r.name }, null, { label: "N", cell: (r) => r.n }],
  });
  assert.equal(
    out,
    '<table class="stack"><thead><tr><th scope="col">Name</th><th scope="col">N</th></tr></thead>' +
      '<tbody><tr><td data-label="Name">Ann</td><td data-label="N">1</td></tr>' +
      '<tr><td data-label="Name">&lt;Bo&gt;</td><td data-label="N">2</td></tr></tbody></table>',
  );
});

Deno.test("table: with no rows, its empty text stands instead; without one, an empty table", async () => {
  const columns = [{ label: "Name", cell: (r: { name: string }) => r.name }];
  assert.equal(await html({ rows: [], columns, empty: "None yet." }), "None yet.");
  assert.equal(await html({ rows: [], columns, empty: null }), "");
  assert.equal(
    await html({ rows: [], columns }),
    '<table class="stack"><thead><tr><th scope="col">Name</th></tr></thead><tbody></tbody></table>',
  );
});
