/** The field both public forms carry (web/_request_page.tsx, web/_proposal_page.tsx). */

/** A field people do not see or fill; robots that fill every field give themselves away. */
export function Honeypot() {
  return (
    <div class="hp" aria-hidden="true">
      <label for="f-website">Leave this empty</label>
      <input id="f-website" name="website" type="text" tabindex={-1} autocomplete="off" />
    </div>
  );
}
