/*
 * tables.js - the scripts (stap.scripts.*, instance per script) and their
 * probes (stap.probes.*, instance "script::probe point") as tables.
 * Cells carry data-metric, data-instance and data-raw.
 */
(function (Stap) {
	'use strict';

	const el = Stap.el;

	const SCRIPT_COLS = [
		['status', 'status'], ['uptime', 'uptime'], ['errors', 'errors'], ['skipped', 'skipped'],
		['dropped', 'dropped'], ['map_full', 'map full'], ['restarts', 'restarts'],
		['output_lines', 'output lines'],
	];
	const COUNTS = new Set(['errors', 'skipped', 'dropped', 'map_full', 'restarts']);

	class ScriptsTable {
		constructor(table) {
			this.body = table.tBodies[0];
			this.rows = new Map();
		}

		row(name) {
			let r = this.rows.get(name);

			if (r)
				return r;
			const cells = {};
			const tr = el('tr', { class: 'script-row', dataset: { script: name } },
				el('td', { class: 'key' }, el('a', { href: '#script-' + name }, name)),
				...SCRIPT_COLS.map(([k]) => (cells[k] = el('td', {
					class: 'value ' + k, dataset: { metric: 'stap.scripts.' + k, instance: name },
				}))));
			const pre = el('pre', { class: 'error', dataset: { metric: 'stap.scripts.error', instance: name } });
			const err = el('tr', { class: 'error-row', dataset: { script: name } },
				el('td', { colspan: String(SCRIPT_COLS.length + 1) }, pre));
			r = { tr, err, cells, pre };
			this.rows.set(name, r);
			return r;
		}

		cell(r, k, v, meta) {
			let text;

			if (v === undefined)
				text = '-';
			else if (k === 'uptime')
				text = Stap.units.format(v, meta ? meta.units : Stap.units.parse('sec'), false);
			else
				text = String(v);
			Stap.setValue(r.cells[k], text, v);
			r.cells[k].classList.toggle('bad', COUNTS.has(k) && v > 0);
		}

		/* values: Map metric -> Map script -> value; meta: Map name -> desc */
		update(values, meta) {
			const status = values.get('stap.scripts.status') || new Map();
			const names = [...status.keys()].sort();

			for (const name of names) {
				const r = this.row(name);
				for (const [k] of SCRIPT_COLS)
					this.cell(r, k, (values.get('stap.scripts.' + k) || new Map()).get(name),
						meta.get('stap.scripts.' + k));
				const st = status.get(name);
				r.tr.dataset.status = st;
				r.tr.className = 'script-row status-' + st;
				const error = (values.get('stap.scripts.error') || new Map()).get(name) || '';
				if (r.pre.textContent !== error)
					r.pre.textContent = error;
				r.err.hidden = error === '';
			}
			for (const [name, r] of this.rows)
				if (!status.has(name)) {
					r.tr.remove();
					r.err.remove();
					this.rows.delete(name);
				}
			const want = names.flatMap((n) => [this.rows.get(n).tr, this.rows.get(n).err]);
			if (want.some((e, i) => this.body.children[i] !== e) || this.body.children.length !== want.length)
				this.body.replaceChildren(...want);
			return names;
		}
	}

	class ProbesTable {
		constructor(table) {
			this.body = table.tBodies[0];
			this.rates = new Stap.panels.Rates();
		}

		update(values, t, meta) {
			const get = (k) => values.get('stap.probes.' + k) || new Map();
			const hits = get('hits'), run = get('run_time'), att = get('attached'), skip = get('skipped');
			const ns = meta.get('stap.probes.run_time') ? meta.get('stap.probes.run_time').units :
				Stap.units.parse('nanosec');
			const count = Stap.units.parse('count');
			const rows = [];

			for (const name of [...hits.keys()].sort()) {
				const h = hits.get(name), r = run.get(name);
				const hr = this.rates.rate('h ' + name, h, t), rr = this.rates.rate('r ' + name, r, t);
				const dh = hr === null ? null : hr, per = hr > 0 && rr !== null ? rr / hr : null;
				const td = (k, v, text) => el('td', {
					class: 'value', dataset: { metric: 'stap.probes.' + k, instance: name, raw: v ?? '' },
				}, text);
				rows.push(el('tr', { dataset: { probe: name } },
					el('td', { class: 'key' }, name),
					td('attached', att.get(name), att.get(name) ? 'yes' : 'no'),
					td('hits', dh, dh === null ? '-' : Stap.units.format(dh, count, true)),
					el('td', { class: 'value total' }, String(h)),
					td('run_time', rr, rr === null ? '-' : Stap.units.format(rr, ns, true)),
					el('td', { class: 'value' }, per === null ? '-' : Stap.units.format(per, ns, false)),
					td('skipped', skip.get(name), String(skip.get(name) ?? '-'))));
			}
			this.rates.forget(new Set([...hits.keys()].flatMap((n) => ['h ' + n, 'r ' + n])));
			this.body.replaceChildren(...rows);
		}
	}

	Stap.ScriptsTable = ScriptsTable;
	Stap.ProbesTable = ProbesTable;
})(window.Stap = window.Stap || {});
