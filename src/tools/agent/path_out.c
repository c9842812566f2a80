/* SPDX-License-Identifier: MIT */
/*
 * The path report (bp_path_report) for people and as json: every section says what
 * it found, or why it found nothing (a driver without coalescing, a virtual device
 * without IRQs), so a reader of either form never meets a silent blank.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <busypoll/nic.h>

#include "tools/agent/agent.h"
#include "tools/common/emit.h"
#include "tools/common/napi_show.h"
#include "tools/common/nic_text.h"

/* A section's reason (failure or note) as json: "NAME_error" / "NAME_note". */
static void emit_why(struct emit *e, const struct bp_path_report *r, int s)
{
	char key[32];

	if (!r->why[s][0])
		return;
	snprintf(key, sizeof(key), "%s_%s", bp_path_section_name(s), r->err[s] ? "error" : "note");
	em_string(e, key, r->why[s], sizeof(r->why[s]));
}

void path_emit(struct emit *e, const struct bp_path_report *r)
{
	em_string(e, "device", r->dev, sizeof(r->dev));
	em_u64(e, "ifindex", r->ifindex);
	if (r->err[BP_PATH_DRIVER]) {
		em_null(e, "driver");
	} else {
		em_string(e, "driver", r->driver.driver, sizeof(r->driver.driver));
		em_string(e, "driver_version", r->driver.version, sizeof(r->driver.version));
		em_string(e, "firmware", r->driver.firmware, sizeof(r->driver.firmware));
		em_string(e, "bus", r->driver.bus, sizeof(r->driver.bus));
	}
	emit_why(e, r, BP_PATH_DRIVER);

	em_begin(e, "channels", r->err[BP_PATH_CHANNELS] != 0);
	for (int k = 0; k < BP_CHAN_KINDS; k++) {
		char key[32];

		if (!(r->channels.has & (1u << k)))
			continue;
		em_u64(e, bp_nic_chan_name(k), r->channels.count[k]);
		snprintf(key, sizeof(key), "%s_max", bp_nic_chan_name(k));
		em_u64(e, key, r->channels.max[k]);
	}
	em_end(e);
	emit_why(e, r, BP_PATH_CHANNELS);

	em_begin(e, "coalesce", r->err[BP_PATH_COALESCE] != 0);
	for (uint32_t bit = 1; bit & BP_COAL_ALL; bit <<= 1) {
		const struct bp_nic_coalesce *c = &r->coalesce;

		if (!(c->has & bit))
			continue;
		if (bit == BP_COAL_ADAPTIVE_RX || bit == BP_COAL_ADAPTIVE_TX)
			em_bool(e, bp_nic_coalesce_name(bit),
				bit == BP_COAL_ADAPTIVE_RX ? c->adaptive_rx : c->adaptive_tx);
		else
			em_u64(e, bp_nic_coalesce_name(bit),
			       bit == BP_COAL_RX_USECS ? c->rx_usecs : bit == BP_COAL_RX_FRAMES ?
			       c->rx_frames : bit == BP_COAL_TX_USECS ? c->tx_usecs : c->tx_frames);
	}
	em_end(e);
	emit_why(e, r, BP_PATH_COALESCE);

	em_u64(e, "rx_queues", r->rx_queues);
	em_u64(e, "tx_queues", r->tx_queues);
	em_array_begin(e, "queues");
	for (size_t i = 0; i < r->n_queues; i++) {
		em_begin(e, NULL, false);
		em_string(e, "type", r->queue[i].tx ? "tx" : "rx", 3);
		em_u64(e, "id", r->queue[i].id);
		if (r->queue[i].napi_id)
			em_u64(e, "napi_id", r->queue[i].napi_id);
		else
			em_null(e, "napi_id");
		em_end(e);
	}
	em_array_end(e);
	emit_why(e, r, BP_PATH_QUEUES);

	em_array_begin(e, "napi");
	for (size_t i = 0; i < r->n_napi && i < BP_PATH_MAX; i++) {
		em_begin(e, NULL, false);
		napi_emit(e, &r->napi[i], NULL);
		em_end(e);
	}
	em_array_end(e);
	emit_why(e, r, BP_PATH_NAPI);

	em_array_begin(e, "irqs");
	for (size_t i = 0; i < r->n_irqs; i++) {
		const struct bp_path_irq *q = &r->irq[i];

		em_begin(e, NULL, false);
		em_u64(e, "irq", (uint64_t)q->irq);
		em_string(e, "name", q->name, sizeof(q->name));
		em_string(e, "affinity", q->affinity, sizeof(q->affinity));
		em_string(e, "effective_affinity", q->effective, sizeof(q->effective));
		if (q->napi_id)
			em_u64(e, "napi_id", q->napi_id);
		else
			em_null(e, "napi_id");
		em_end(e);
	}
	em_array_end(e);
	emit_why(e, r, BP_PATH_IRQS);
}

void path_print(FILE *out, const struct bp_path_report *r)
{
	char text[256];

	fprintf(out, "device    %s (ifindex %" PRIu32 ")\n", r->dev, r->ifindex);
	if (r->err[BP_PATH_DRIVER])
		fprintf(out, "driver    unknown: %s\n", r->why[BP_PATH_DRIVER]);
	else
		fprintf(out, "driver    %s %s%s%s\n", r->driver.driver, r->driver.version,
			r->driver.bus[0] ? ", bus " : "", r->driver.bus);

	if (r->err[BP_PATH_CHANNELS]) {
		fprintf(out, "channels  unknown: %s\n", r->why[BP_PATH_CHANNELS]);
	} else {
		fprintf(out, "channels ");
		for (int k = 0; k < BP_CHAN_KINDS; k++)
			if (r->channels.has & (1u << k))
				fprintf(out, " %s %" PRIu32 " of %" PRIu32, bp_nic_chan_name(k),
					r->channels.count[k], r->channels.max[k]);
		fputc('\n', out);
	}
	nic_format_coalesce(&r->coalesce, text, sizeof(text));
	if (r->err[BP_PATH_COALESCE])
		fprintf(out, "coalesce  not available: %s\n", r->why[BP_PATH_COALESCE]);
	else
		fprintf(out, "coalesce  %s\n", text[0] ? text : "(the driver reports no parameters)");

	if (r->err[BP_PATH_QUEUES]) {
		fprintf(out, "queues    unknown: %s\n", r->why[BP_PATH_QUEUES]);
	} else {
		fprintf(out, "queues    %" PRIu32 " rx, %" PRIu32 " tx", r->rx_queues, r->tx_queues);
		for (size_t i = 0; i < r->n_queues; i++)
			if (r->queue[i].napi_id)
				fprintf(out, "; %s-%" PRIu32 " on NAPI %" PRIu32, r->queue[i].tx ? "tx" : "rx",
					r->queue[i].id, r->queue[i].napi_id);
		fputc('\n', out);
	}

	if (r->err[BP_PATH_NAPI] || r->n_napi == 0) {
		fprintf(out, "napi      none: %s\n", r->why[BP_PATH_NAPI]);
	} else {
		fprintf(out, "napi\n");
		napi_table_header(out, "   ");
		for (size_t i = 0; i < r->n_napi && i < BP_PATH_MAX; i++)
			napi_table_row(out, "   ", &r->napi[i], r->dev);
	}

	if (r->n_irqs == 0) {
		fprintf(out, "irqs      none: %s\n", r->why[BP_PATH_IRQS]);
		return;
	}
	fprintf(out, "irqs\n");
	for (size_t i = 0; i < r->n_irqs; i++) {
		const struct bp_path_irq *q = &r->irq[i];

		fprintf(out, "   %-5d %-24s affinity %-10s effective %-6s", q->irq,
			q->name[0] ? q->name : "?", q->affinity[0] ? q->affinity : "?",
			q->effective[0] ? q->effective : "?");
		if (q->napi_id)
			fprintf(out, " NAPI %" PRIu32, q->napi_id);
		fputc('\n', out);
	}
}
