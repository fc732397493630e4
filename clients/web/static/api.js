// The API client: every request of the page goes to the back end (`backend`, app.js) under api/v1/.
// A refused request throws an ApiError whose message is the refusal's reason in the player's words
// (reasons.js) or else the answer's English `detail`; the game's record is fetched the same way and
// saved as a file.

import { t } from "./i18n.js";
import { backend } from "./app.js";
import { showMessage } from "./page_log.js";
import { reasonWords } from "./reasons.js";

export const API = "api/v1";

export class ApiError extends Error {
  constructor(message, status, data) {
    super(message);
    this.status = status;
    this.data = data;
  }
}

function detailText(data, res) {
  const detail = data && data.detail;
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail)) {
    return detail.map((d) => (d && d.msg ? `${(d.loc || []).slice(1).join(".") || "request"}: ${d.msg}` : String(d))).join("; ");
  }
  return t("error.status", { status: `${res.status} ${res.statusText}`.trim() });
}

export async function api(path, options = {}) {
  let res;
  try {
    res = await backend.fetch(`${API}/${path}`, {
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      ...options,
    });
  } catch (err) {
    throw new ApiError(t("error.unreachable", { why: err.message }), 0, null);
  }
  let data = null;
  try {
    data = await res.json();
  } catch {
    data = null;
  }
  if (!res.ok) throw new ApiError(reasonWords(data) || detailText(data, res), res.status, data);
  return data;
}

/** The game's record from the back end, saved as a file (a link to the API would reach only a server). */
export async function downloadRecord(event) {
  event.preventDefault();
  const link = event.currentTarget;
  try {
    const res = await backend.fetch(link.getAttribute("href"));
    if (!res.ok) throw new ApiError(detailText(await res.json().catch(() => null), res), res.status, null);
    const save = document.createElement("a");
    save.href = URL.createObjectURL(await res.blob());
    save.download = link.getAttribute("download");
    save.click();
    setTimeout(() => URL.revokeObjectURL(save.href), 10_000);
  } catch (err) {
    showMessage(t("error.record", { why: err.message }));
  }
}
