/*
 * rest.js - pmproxy's REST API (/pmapi/*), the dashboard's only source.
 *
 * A Stap.Rest talks to one pmproxy about one pmcd host through one REST
 * context, made on first use and made again when pmproxy forgets it (its
 * poll time-out, a pmproxy restart).  Every failure is a Stap.RestError
 * whose kind says what to tell the user:
 *	unreachable	no answer from pmproxy (down, wrong URL, refused)
 *	pmcd		pmproxy answers but cannot reach pmcd on the host
 *	pmapi		pmproxy refused the request (its message)
 * Requests time out after 10 s.  pmproxy sends Access-Control-Allow-Origin
 * on every answer, so a page opened from disk (origin null) may ask too.
 */
(function (Stap) {
	'use strict';

	class RestError extends Error {
		constructor(kind, message) {
			super(message);
			this.kind = kind;
		}
	}

	const TIMEOUT_MS = 10000;
	const POLL_TIMEOUT_S = 60;

	class Rest {
		constructor(url, host) {
			this.url = url.replace(/\/+$/, '');
			this.host = host || '';
			this.context = null;
		}

		async raw(path, params) {
			const q = new URLSearchParams(params || {});
			const ctl = new AbortController();
			const timer = setTimeout(() => ctl.abort(), TIMEOUT_MS);
			let resp, body;

			try {
				resp = await fetch(this.url + path + '?' + q.toString(),
					{ signal: ctl.signal, cache: 'no-store' });
				body = await resp.text();
			} catch (e) {
				throw new RestError('unreachable', ctl.signal.aborted ?
					'no answer in ' + TIMEOUT_MS / 1000 + ' s' : e.message);
			} finally {
				clearTimeout(timer);
			}
			let json;
			try {
				json = JSON.parse(body);
			} catch (e) {
				throw new RestError('pmapi', 'not pmproxy\'s answer (HTTP ' + resp.status + ')');
			}
			if (json && json.success === false) {
				const kind = /cannot connect to PMCD|Connection refused|No route/i.test(json.message) ?
					'pmcd' : 'pmapi';
				throw new RestError(kind, json.message || 'HTTP ' + resp.status);
			}
			return json;
		}

		async connect() {
			const params = { polltimeout: POLL_TIMEOUT_S };

			if (this.host)
				params.hostspec = this.host;
			const json = await this.raw('/pmapi/context', params);
			this.context = json.context;
			this.hostname = json.labels && json.labels.hostname || json.hostspec || this.host;
			this.fresh = true;
			return json;
		}

		/* GET PATH in the context; a context pmproxy forgot is made again, once. */
		async get(path, params) {
			if (this.context === null)
				await this.connect();
			try {
				return await this.raw(path, Object.assign({ context: this.context }, params));
			} catch (e) {
				if (e.kind !== 'pmapi' || !/context/i.test(e.message))
					throw e;
				this.context = null;
				await this.connect();
				return this.raw(path, Object.assign({ context: this.context }, params));
			}
		}

		children(prefix) {
			return this.get('/pmapi/children', { prefix });
		}

		metrics(prefix) {
			return this.get('/pmapi/metric', { prefix });
		}

		fetch(names) {
			return this.get('/pmapi/fetch', { names: names.join(',') });
		}

		indom(indom) {
			return this.get('/pmapi/indom', { indom });
		}
	}

	Stap.Rest = Rest;
	Stap.RestError = RestError;
})(window.Stap = window.Stap || {});
