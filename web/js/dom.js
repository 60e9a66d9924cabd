/*
 * dom.js - small helpers: elements made from data as text, never as HTML
 * (script output, help text and instance names are anyone's strings).
 */
(function (Stap) {
	'use strict';

	/* Stap.el('td', { class: 'value', dataset: { metric: 'x' } }, 'text', child) */
	function el(tag, attrs, ...kids) {
		const e = document.createElement(tag);

		for (const [k, v] of Object.entries(attrs || {})) {
			if (k === 'dataset')
				Object.assign(e.dataset, v);
			else if (k === 'class')
				e.className = v;
			else if (k === 'title')
				e.title = v;
			else
				e.setAttribute(k, v);
		}
		for (const k of kids)
			if (k !== null && k !== undefined)
				e.append(k instanceof Node ? k : String(k));
		return e;
	}

	/* Set a cell's text and its raw value (data-raw), for people and for tests. */
	function setValue(e, text, raw) {
		if (e.textContent !== text)
			e.textContent = text;
		const r = raw === null || raw === undefined ? '' : String(raw);
		if (e.dataset.raw !== r)
			e.dataset.raw = r;
	}

	/* The help a metric's header shows on hover. */
	function helpText(m) {
		const parts = [m.name];

		if (m.oneline)
			parts.push(m.oneline);
		if (m.help && m.help !== m.oneline)
			parts.push(m.help);
		parts.push('type ' + m.type + ', ' + m.sem + ', units ' + m.units.text);
		return parts.join('\n\n');
	}

	function clock(t) {
		const d = new Date(t * 1000);

		return d.toTimeString().slice(0, 8);
	}

	Stap.el = el;
	Stap.setValue = setValue;
	Stap.helpText = helpText;
	Stap.clock = clock;
})(window.Stap = window.Stap || {});
