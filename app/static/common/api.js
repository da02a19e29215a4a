// The service's /v1 endpoints, for the lab and the planner alike: resolved against the page's own
// address, so that a page keeps working when the service is mounted under a path prefix. An
// answer that is not 2xx becomes an ApiProblem from its RFC 9457 problem+json body.

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

async function send(url, init, accept) {
  let response;
  try {
    response = await fetch(url, { ...init, headers: { ...(init.headers || {}), Accept: accept } });
  } catch (error) {
    if (error.name === "AbortError") throw error;
    throw new ApiProblem(0, "Network error", `Could not reach the service at ${url.pathname}: ${error.message}`);
  }
  if (!response.ok) {
    let body = null;
    try {
      body = await response.json();
    } catch {
      body = null;
    }
    const title = body?.title || response.statusText;
    const detail = body?.detail || `${response.status} ${title} from ${url.pathname}`;
    throw new ApiProblem(response.status, title, detail, body?.errors);
  }
  return response;
}

async function json(response, url) {
  try {
    return await response.json();
  } catch {
    throw new ApiProblem(response.status, "Bad answer", `${url.pathname} did not answer JSON`);
  }
}

export async function getJson(path, params, signal) {
  const url = apiUrl(path, params);
  return json(await send(url, { signal }, "application/json"), url);
}

function post(body, signal) {
  return { method: "POST", body: JSON.stringify(body), headers: { "Content-Type": "application/json" }, signal };
}

export async function postJson(path, body, signal) {
  const url = apiUrl(path);
  return json(await send(url, post(body, signal), "application/json"), url);
}

/** The API's own text rendering of a POST (CSV with `text/csv`, or `?format=keda` YAML). */
export async function postText(path, body, { accept = "text/plain", params, signal } = {}) {
  const url = apiUrl(path, params);
  return (await send(url, post(body, signal), accept)).text();
}

/** A POST's answer as bytes (a `?format=xlsx` workbook). */
export async function postBlob(path, body, { accept = "application/octet-stream", params, signal } = {}) {
  const url = apiUrl(path, params);
  return (await send(url, post(body, signal), accept)).blob();
}

/** A POST of a text or file body (a request log to /v1/traces), answered with JSON. */
export async function postBody(path, body, { params, signal, contentType = "text/plain" } = {}) {
  const url = apiUrl(path, params);
  const init = { method: "POST", body, headers: { "Content-Type": contentType }, signal };
  return json(await send(url, init, "application/json"), url);
}
