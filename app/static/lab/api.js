// The service's /v1 endpoints, resolved against the page's own address so that the lab
// keeps working when the service is mounted under a path prefix.

export class ApiProblem extends Error {
  /** An RFC 9457 problem (or a network failure, with status 0). */
  constructor(status, title, detail, errors) {
    super(detail || title || `HTTP ${status}`);
    this.status = status;
    this.title = title;
    this.detail = detail;
    this.errors = errors || {};
  }
}

export function apiUrl(path, params) {
  const url = new URL(`v1/${path}`, document.baseURI);
  if (params) url.search = params.toString();
  return url;
}

export async function getJson(path, params, signal) {
  const url = apiUrl(path, params);
  let response;
  try {
    response = await fetch(url, { headers: { Accept: "application/json" }, signal });
  } catch (error) {
    if (error.name === "AbortError") throw error;
    throw new ApiProblem(0, "Network error", `Could not reach the service at ${url.pathname}: ${error.message}`);
  }
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  if (!response.ok) {
    const title = body?.title || response.statusText;
    const detail = body?.detail || `${response.status} ${title} from ${url.pathname}`;
    throw new ApiProblem(response.status, title, detail, body?.errors);
  }
  if (body === null) throw new ApiProblem(response.status, "Bad answer", `${url.pathname} did not answer JSON`);
  return body;
}
